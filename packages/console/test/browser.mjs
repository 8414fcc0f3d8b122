// The console in a real browser (issue 37): Debian's chromium driven by playwright-core, against one
// `hortus serve` on SQLite with access control on. Signs in as each user, opens every page, switches
// pump_1 and reads it back with the CLI, draws a 7-day chart, and runs axe-core on every page (0 serious
// or critical). `--screenshots <dir>` also saves a PNG of each page (docs/console.md shows them).
// Run: node packages/console/test/browser.mjs (after the build); CI runs it from .ci/run.
/* global document, axe, fetch */
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const started = Date.now();
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const hortus = join(root, 'packages/cli/bin/hortus.js');
const require = createRequire(import.meta.url);
const axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
const shotsAt = process.argv.indexOf('--screenshots');
const shots = shotsAt < 0 ? undefined : process.argv[shotsAt + 1];
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORD = 'console-test-passphrase';
const failures = [];

const dataDir = await mkdtemp(join(tmpdir(), 'hortus-console-'));
const env = {
  ...process.env,
  HORTUS_DATA_DIR: dataDir,
  STORE: 'sqlite',
  LOG_FORMAT: 'json',
  LOG_REQUESTS: 'off',
};
delete env.MONGODB_URI;
const run = (args, input) =>
  new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [hortus, ...args],
      { env, cwd: dataDir },
      (error, stdout, stderr) =>
        error ? reject(new Error(`hortus ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
    );
    child.stdin.end(input ?? '');
  });

function check(condition, message) {
  if (!condition) {
    failures.push(message);
    console.error(`FAIL ${message}`);
  } else console.log(`ok   ${message}`);
}

// The store: the demo greenhouse (a day of readings), 7 days of temperature before it, and three people.
await run(['seed', '--demo']);
const rows = ['group,topic,value,time'];
const now = Date.now();
for (let at = now - 7 * 86_400_000; at < now - 86_400_000; at += 600_000) {
  const hour = (at % 86_400_000) / 3_600_000;
  rows.push(
    `demo,esp/air/temperature,${(20 + 5 * Math.cos(((hour - 14) / 24) * 2 * Math.PI)).toFixed(2)},${new Date(at).toISOString()}`,
  );
}
await writeFile(join(dataDir, 'week.csv'), `${rows.join('\n')}\n`);
await run(['readings', 'import', join(dataDir, 'week.csv')]);
// A lockout, which the automations page lists in words.
await run(['action', 'lockout', 'pump_1', '--group', 'demo', '--sensor', 'humidity', '--above', '95']);
const userHelp = await run(['user', 'create', '--help']);
const roles = userHelp.includes('--role');
const people = ['admin', 'operator', 'viewer'];
for (const role of people) {
  await run(
    [
      'user',
      'create',
      '--first-name',
      role,
      '--last-name',
      'Tester',
      '--email',
      `${role}@example.org`,
      '--group',
      'demo',
      '--password-stdin',
      ...(roles ? ['--role', role] : []),
    ],
    PASSWORD,
  );
}

// One server, access control on.
const server = spawn(process.execPath, [hortus, 'serve', '--port', '0'], {
  env: { ...env, AUTH: 'on', HOST: '127.0.0.1', AUTOMATIONS: 'off' },
  cwd: dataDir,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const base = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: server.stdout });
  lines.on('line', (line) => {
    try {
      const entry = JSON.parse(line);
      if (entry.event === 'listening') resolve(entry.url);
      if (entry.event === 'start failed') reject(new Error(line));
    } catch {
      // not a log line
    }
  });
  server.once('exit', (code) => reject(new Error(`the server ended (${code}) before listening`)));
});

const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const axePage = async (page, name) => {
    await page.evaluate(axeSource);
    const result = await page.evaluate(async () =>
      (await axe.run(document, { resultTypes: ['violations'] })).violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        nodes: violation.nodes.slice(0, 3).map((node) => node.target.join(' ')),
      })),
    );
    const serious = result.filter(
      (violation) => violation.impact === 'serious' || violation.impact === 'critical',
    );
    check(
      serious.length === 0,
      `${name}: axe finds no serious or critical problem ${JSON.stringify(serious)}`,
    );
  };
  const shows = async (locator, message) => {
    const seen = await locator.waitFor({ timeout: 10_000 }).then(
      () => true,
      () => false,
    );
    check(seen, message);
  };
  const shoot = async (page, name) => {
    if (shots !== undefined)
      await page.screenshot({ path: join(shots, `console-${name}.png`), fullPage: true });
  };

  const signIn = async (role, viewport = { width: 1280, height: 860 }) => {
    const context = await browser.newContext({ viewport });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/u.test(message.text()))
        failures.push(`${role}: CSP: ${message.text()}`);
    });
    page.on('pageerror', (error) => failures.push(`${role}: page error: ${error.message}`));
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').fill(`${role}@example.org`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    return { context, page };
  };
  const visit = async (page, hash, heading) => {
    await page.goto(`${base}/console/#/${hash}`);
    await page.getByRole('heading', { name: heading }).first().waitFor();
  };

  // Before signing in: the sign-in page only.
  {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await axePage(page, 'sign-in');
    await shoot(page, 'sign-in');
    await context.close();
  }

  // The operator: every page, a switch, an acknowledgement.
  {
    const { context, page } = await signIn('operator');
    await page.getByRole('link', { name: 'demo' }).first().waitFor();
    check((await page.getByText('Temperature').count()) > 0, 'overview shows the temperature');
    await axePage(page, 'overview');
    await shoot(page, 'overview');

    await visit(page, 'group/demo', 'Group demo');
    const pump = page.getByRole('switch', { name: /pump_1/u });
    await pump.waitFor();
    check((await pump.getAttribute('aria-checked')) === 'false', 'pump_1 starts off');
    await axePage(page, 'group');
    await shoot(page, 'group');
    await pump.click();
    await page.waitForFunction(
      () =>
        document.querySelector('[role=switch][aria-checked=true]')?.textContent?.includes('pump_1') === true,
    );
    const listed = JSON.parse(await run(['--json', 'action', 'list', '--group', 'demo']));
    const pumpState = (Array.isArray(listed) ? listed : (listed.actions ?? listed.message ?? [])).find(
      (action) => action.object === 'pump_1',
    );
    check(
      pumpState?.value === 'on',
      `the operator switched pump_1 and the CLI shows it on (${JSON.stringify(pumpState)})`,
    );

    await visit(page, 'charts/demo', 'Charts of demo');
    await page.getByLabel('Range').selectOption({ label: '7 days' });
    await page.locator('.uplot canvas').waitFor();
    const points = await page.locator('.legend').textContent();
    check(
      /\d+ points/u.test(points ?? '') && !/ 0 points/u.test(points ?? ''),
      `a 7-day chart draws (${points})`,
    );
    await axePage(page, 'charts');
    await shoot(page, 'charts');

    await visit(page, 'boxes/demo', 'Boxes of demo');
    await shows(page.getByText('24:6F:28').first(), 'boxes lists the demo boxes');
    await axePage(page, 'boxes');

    await visit(page, 'automations/demo', 'Automations of demo');
    await shows(page.getByRole('heading', { name: /pump_1/u }), 'automations shows pump_1');
    await shows(
      page.getByText('pump_1: esp/air/humidity above 95'),
      'automations lists the lockout of pump_1 in words',
    );
    await axePage(page, 'automations');
    await shoot(page, 'automations');

    await visit(page, 'alerts/demo', 'Alerts of demo');
    const acknowledge = page.getByRole('button', { name: 'Acknowledge' });
    await shows(acknowledge.first(), 'alerts shows an open alert with an Acknowledge button');
    const before = await acknowledge.count();
    await axePage(page, 'alerts');
    await shoot(page, 'alerts');
    if (before > 0) {
      await acknowledge.first().click();
      await page.waitForFunction(
        (count) =>
          document.querySelectorAll('button').length > 0 &&
          [...document.querySelectorAll('button')].filter((button) => button.textContent === 'Acknowledge')
            .length < count,
        before,
      );
      check(true, 'an alert is acknowledged and leaves the open list');
    }
    await context.close();
  }

  // The admin: the boxes page with its management; a pending box claimed, where the server has the route.
  {
    // A box nobody registered asks to join, as the firmware does at start: it is listed as pending.
    const newBox = '100cc286f24';
    const ask = () =>
      fetch(`${base}/api/hardware`, {
        headers: { deviceId: newBox, updateVersion: '1.0.4', lastactive: '10' },
      });
    check((await ask()).status === 400, 'an unknown box is refused and waits as pending');
    const { context, page } = await signIn('admin');
    await visit(page, 'boxes/demo', 'Boxes of demo');
    const pendingRoute = await page.evaluate(async () => (await fetch('/api/admin/boxes/pending')).status);
    if (pendingRoute === 200) {
      const claim = page.getByRole('row', { name: /24:6F:28:CC:/iu }).getByRole('button', { name: 'Claim' });
      await shows(claim, 'a pending box shows its MAC and a Claim button');
      await claim.click();
      await page
        .getByRole('rowheader', { name: /24:6F:28:CC:/iu })
        .first()
        .waitFor();
      check((await ask()).status === 200, "the claimed box's next request is accepted");
    } else {
      console.log(`skip claiming: this server has no /api/admin/boxes/pending (${pendingRoute})`);
    }
    await axePage(page, 'boxes (admin)');
    await shoot(page, 'boxes');
    await context.close();
  }

  // The viewer, by keyboard and at 375 px: no switch; the API refuses one.
  {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${base}/console/`);
    await page.getByLabel('E-mail').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type('viewer@example.org');
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page
      .getByRole('heading', { name: 'Overview' })
      .waitFor()
      .catch(async (error) => {
        if (shots !== undefined) await page.screenshot({ path: join(shots, 'failed-keyboard.png') });
        throw error;
      });
    check(true, 'the viewer signs in by keyboard alone');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 375, `the overview fits 375 px (${width})`);
    await shoot(page, 'overview-375');
    await visit(page, 'group/demo', 'Group demo');
    await page.getByRole('heading', { name: 'Actions' }).waitFor();
    if (roles) {
      check((await page.getByRole('switch').count()) === 0, 'the viewer sees no switch');
      const status = await page.evaluate(
        async () => (await fetch('/api/actions/?group=demo&object=pump_1&value=off')).status,
      );
      check(status === 403, `the API refuses the viewer a switch (${status})`);
    } else {
      console.log('skip the viewer role checks: this server has no roles yet');
    }
    await context.close();
  }
} catch (error) {
  failures.push(error instanceof Error ? error.stack : String(error));
} finally {
  await browser.close();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await rm(dataDir, { recursive: true, force: true });
}

console.log(
  `console browser test: ${failures.length} failure(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
if (failures.length > 0) {
  for (const failure of failures) console.error(failure);
  process.exit(1);
}
