import { expect } from 'chai';
import { HttpMetrics } from '@hortus/http-koa';

describe('hortus_backup_newest_age_seconds', () => {
  it('when scheduled backups are on, then /metrics has the newest backup age in whole seconds, +Inf before the first; without them, no series', () => {
    const off = new HttpMetrics();
    expect(off.render()).to.not.contain('hortus_backup_newest_age_seconds');

    let age = Number.POSITIVE_INFINITY;
    const on = new HttpMetrics();
    on.watchBackups(() => age);
    expect(on.render()).to.contain('# TYPE hortus_backup_newest_age_seconds gauge');
    expect(on.render()).to.match(/^hortus_backup_newest_age_seconds \+Inf$/mu);
    age = 3600.4;
    expect(on.render()).to.match(/^hortus_backup_newest_age_seconds 3600$/mu);
  });
});
