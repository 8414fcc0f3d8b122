import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const unit = readFileSync(join(root, 'deploy/hortus.service'), 'utf8');
const deployment = readFileSync(join(root, 'docs/deployment.md'), 'utf8');

/** `Key=value` lines of one section of a unit file. */
function section(text: string, name: string): Map<string, string> {
  const body = text.split(`[${name}]\n`)[1]?.split(/^\[/mu)[0] ?? '';
  const entries = body
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/u.test(line))
    .map((line): [string, string] => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)];
    });
  return new Map(entries);
}

describe('deploy/hortus.service', () => {
  it('when read, then the data directory is the service user’s alone (0700) and every file it creates is 0600 (UMask)', () => {
    const service = section(unit, 'Service');
    expect(service.get('StateDirectory')).to.equal('hortus');
    expect(service.get('StateDirectoryMode')).to.equal('0700');
    expect(service.get('UMask')).to.equal('0077');
    expect(service.get('Environment')).to.equal('HORTUS_DATA_DIR=/var/lib/hortus');
  });

  it('when docs/deployment.md shows the unit, then it shows this file exactly', () => {
    const shown = /```ini\n# \/etc\/systemd\/system\/hortus\.service\n([\s\S]*?)```/u.exec(deployment)?.[1];
    expect(shown).to.equal(unit);
  });
});
