import { expect } from 'chai';
import { boxGroupName, isBoxPastable } from '@hortus/core';

/** Firmware 1.0.4 builds each reading's JSON by pasting the group name between quotes (COMPAT "Boxes"). */
function pasted(group: string): unknown {
  return JSON.parse(`{"document":{"topic":"esp/air/temperature","group":"${group}","value":"21.37"}}`);
}

describe('boxGroupName: the group name a firmware 1.0.4 box is told, which it pastes unescaped', () => {
  it('when a name holds ", \\ or control characters, then each becomes _ and the pasted JSON parses', () => {
    const name = 'Nord "A" \\ 2\tbeet\u0000\u001f';

    const told = boxGroupName(name);

    expect(told).to.equal('Nord _A_ _ 2_beet__');
    expect(isBoxPastable(name)).to.equal(false);
    expect(() => pasted(name)).to.throw(SyntaxError);
    expect(pasted(told)).to.deep.equal({
      document: { topic: 'esp/air/temperature', group: told, value: '21.37' },
    });
  });

  it("when a name holds only pastable characters (letters of any script, ' / { } spaces), then it is told unchanged", () => {
    for (const name of ["Gewächshaus O'Brien", 'a/b {c} [d]: e,f', '温室 🌱', 'del\u007f', 'greenhouse-1']) {
      expect(boxGroupName(name), name).to.equal(name);
      expect(isBoxPastable(name), name).to.equal(true);
      expect((pasted(name) as { document: { group: string } }).document.group, name).to.equal(name);
    }
  });
});
