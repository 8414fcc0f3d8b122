import { type DocBlock } from './doc-blocks.js';
import { repositoryRoot } from './doc-session.js';

/**
 * What the docs test needs to know beyond the docs themselves: per file, how its server starts; per block,
 * placeholders to fill, set-up the doc does not show, and where a command's exit code or output differs from
 * the default (exit 0, and the output the doc shows). A block is found by its file and the start of its first
 * command, so editing the text around it keeps its plan.
 */

export interface FilePlan {
  /** Flags of the server a file's curl commands talk to (`serve --port 0` plus these). */
  readonly serverArgs?: readonly string[];
  /** Variables for every command of the file (and its server). */
  readonly env?: Record<string, string>;
  /** Shell run once before the file's first block. */
  readonly setup?: string;
  /** Variables of the file's server only. */
  readonly serverEnv?: Record<string, string>;
  /** Give HTTPS_PORT a free port instead of 0, for a server whose onboarding names it. */
  readonly httpsPort?: boolean;
}

export interface BlockPlan {
  readonly file: string;
  /** The block's first command starts with this. */
  readonly first: string;
  /** Start the file's server even though no command names :8080. */
  readonly server?: boolean;
  /** Shell run before the block, not shown in the doc (files it reads, groups it assumes). */
  readonly setup?: string;
  /** Text replaced in every command and shown output: placeholders, other machines' addresses ({url}: the server's). */
  readonly substitute?: readonly (readonly [string, string])[];
  /** Shell run (silently) before the command of that index: waiting for what the doc says happens. */
  readonly before?: Readonly<Record<number, string>>;
  /** Commands not run, with the reason (the others of the block are): a MongoDB server elsewhere, say. */
  readonly skip?: Readonly<Record<number, string>>;
  /** Exit codes other than 0, by command index (the doc says "exit 3 when ..."). */
  readonly exit?: Readonly<Record<number, number>>;
  /** Instead of the output the doc shows: patterns, or not compared (say why next to it). */
  readonly output?: Readonly<Record<number, readonly RegExp[] | 'not-compared'>>;
}

const needsMongo = 'needs a MongoDB server (the MongoDB suites run the same commands against FerretDB)';
/** The id of the first access key, for `hortus keys revoke <id>`. */
const firstKeyId = `"$(hortus keys list --json | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8"))[0].id)')"`;

export const filePlans: Readonly<Record<string, FilePlan>> = {
  // `pnpm start` is `hortus serve --demo`; a short engine tick so "within 10 s" is a moment here.
  'README.md': { serverArgs: ['--demo'], env: { AUTOMATION_TICK_MS: '200' } },
  'docs/alerts.md': {
    // The box of the doc's --box examples.
    setup: 'hortus group create gh && hortus device create a0b1c2d3e4f5 --group gh --type sensor-box',
    env: { SECRET: 'a-webhook-secret-of-32-characters' },
  },
  'docs/automations.md': {
    setup:
      'hortus group create greenhouse-1 && for a in pump_1 heater_1 ventilator_1; do hortus action create $a --group greenhouse-1; done',
  },
  'docs/cli.md': { env: { PASSWORD: 'a-password-of-some-length' } },
  // The example recipes, where the doc's commands name them.
  'docs/recipes.md': {
    setup: `hortus group create greenhouse-1 && hortus action create fan --group greenhouse-1 && mkdir -p docs && cp -r '${repositoryRoot}docs/recipes' docs/`,
  },
  'docs/performance.md': { serverArgs: ['--demo'] },
  // The simulated box sends its readings over HTTPS, to the port onboarding names.
  'docs/boxes.md': { httpsPort: true, serverEnv: { TLS: 'self-signed' } },
  'docs/stores.md': {
    setup:
      "hortus group create greenhouse-1 && printf 'group,topic,value,time\\ngreenhouse-1,esp/air/temperature,21.5,2025-06-15T12:00:00Z\\n' > seed.csv && hortus readings import seed.csv",
  },
};

const plans: readonly BlockPlan[] = [
  {
    file: 'README.md',
    first: 'B=http://127.0.0.1:8080',
    before: {
      4: 'for _ in $(seq 1 100); do curl -s "$B/api/actions/automation_log?group=demo" | grep -q ventilator_1 && break; sleep 0.1; done',
    },
  },
  {
    file: 'README.md',
    first: 'HORTUS_DATA_DIR=/var/lib/hortus',
    substitute: [['/var/lib/hortus', './var/lib/hortus']],
    skip: { 1: needsMongo },
  },
  {
    file: 'docs/accounts.md',
    first: 'hortus keys create --name ops --kind admin',
    setup: 'mkdir -p build && echo "<!doctype html><title>client</title>" > build/index.html',
  },
  {
    file: 'docs/alerts.md',
    first: 'hortus group notify gh ',
    setup: "printf 'another-webhook-secret-of-32-chars' > hook-secret",
    substitute: [['/run/secrets/hook', './hook-secret']],
  },
  {
    file: 'docs/boxes.md',
    first: 'hortus box simulate',
    server: true,
    setup: 'hortus device create 24:6F:28:AA:00:01 --group gh --type sensor-box --create-group',
    substitute: [['http://192.168.178.121:8080', '{url}']],
  },
  {
    file: 'docs/boxes.md',
    first: 'TLS_CERT_FILE=/etc/hortus/cert.pem',
    setup:
      'mkdir -p etc-hortus && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost -keyout etc-hortus/key.pem -out etc-hortus/cert.pem',
    substitute: [['/etc/hortus/', './etc-hortus/']],
    // The file's server holds its HTTPS port (for the simulator above).
    before: { 0: 'export HTTPS_PORT=0' },
  },
  { file: 'docs/cli.md', first: 'STORE=memory hortus device list', exit: { 0: 2 } },
  {
    file: 'docs/cli.md',
    first: 'hortus serve --port 8099',
    // No request reaches this server, so its request line is not there.
    output: {
      0: [
        /"event":"listening","url":"http:\/\/127\.0\.0\.1:\d+",.*"store":"sqlite","automations":true,"mqtt":"off"/,
        /"event":"automations started","tickMs":10000/,
        /"event":"signal received","signal":"SIGTERM"[\s\S]*"event":"shutting down","graceMs":10000[\s\S]*"event":"automations stopped"[\s\S]*"event":"stopped"/,
      ],
    },
  },
  {
    file: 'docs/cli.md',
    first: 'HORTUS_DATADIR=/srv/hortus hortus config check',
    before: { 0: 'unset PORT HTTPS_PORT' },
  },
  {
    file: 'docs/cli.md',
    first: 'hortus group create greenhouse-1',
    setup: 'hortus group create greenhouse-old',
    // Its counts are of a group that lived; this one was just created.
    output: {
      5: [/Deleted group greenhouse-old:\s+Readings:\s+0\s+Devices:\s+0[\s\S]*Access keys revoked:\s+0/],
    },
  },
  {
    file: 'docs/cli.md',
    first: 'hortus action create pump_1',
    // The lockout lines name a heater and a fan.
    setup: `echo '[{"timeAutomations":[{"action":"on","time":"06:30","frequency":"weekdays"}],"sensorAutomations":[]}]' > rules.json && hortus action create heater_1 --group greenhouse-1 && hortus action create ventilator_1 --group greenhouse-1`,
  },
  {
    file: 'docs/cli.md',
    first: 'hortus action history pump_1 --group greenhouse-1 --limit 2',
    // The action above is deleted by now; this one was switched on by the CLI only, no engine yet.
    setup:
      'hortus action create pump_1 --group greenhouse-1 && hortus action set pump_1 on --group greenhouse-1',
    output: { 0: [/TIME\s+OBJECT\s+VALUE\s+BY\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T\s+pump_1\s+on\s+cli/] },
  },
  // Nothing was notified at those times here: the exit 3 the doc names.
  { file: 'docs/cli.md', first: 'hortus notifications list', exit: { 1: 3 } },
  // No alert was raised here: the id of the doc is unknown, the exit 3 of a missing notification.
  { file: 'docs/alerts.md', first: 'hortus notifications list --group gh', exit: { 1: 3 } },
  {
    file: 'docs/cli.md',
    first: 'hortus readings import readings.csv',
    setup:
      "printf 'group,topic,value,time\\ngreenhouse-1,esp/air/temperature,21.5,2025-06-15T12:00:00Z\\n' > readings.csv",
  },
  {
    file: 'docs/cli.md',
    first: 'hortus readings import box.ndjson',
    // Six lines and an empty one, giving the doc's four accepted readings and four rejections.
    setup: `cat > box.ndjson <<'EOF'
{"group":"greenhouse-1","time":"2025-06-15T13:00:00Z","values":{"esp/air/temperature":21.5,"esp/air/humidity":60}}
{"group":"greenhouse-1","topic":"esp/air/humidity","value":61,"time":"2025-06-15T13:05:00Z"}

not json
{"group":"greenhouse-1","time":"2025-06-15T13:10:00Z","values":{"esp/air/temperature":"warm","esp/air/humidity":62}}
[1]
{"group":"greenhouse-1","values":{}}
EOF`,
    exit: { 0: 2 },
  },
  {
    file: 'docs/cli.md',
    first: 'hortus readings delete --group demo',
    // The group demo is seeded only below; the readings of those windows are the doc's.
    substitute: [['demo', 'greenhouse-1']],
    output: {
      0: [
        // The days are UTC days, shown in TIME_ZONE (not set: Europe/Berlin).
        /Deleted \d+ readings? of group greenhouse-1 \(esp\/air\/temperature\) from 2099-01-01 01:00:00 CET to 2100-01-01 00:59:59 CET\./,
      ],
      1: [
        /"group": "greenhouse-1",\s+"from": "2025-06-15T10:00:00\.000Z",\s+"to": "2025-06-15T10:05:00\.000Z",\s+"deleted": \d+/,
      ],
    },
  },
  {
    file: 'docs/cli.md',
    first: 'echo "$PASSWORD" | hortus store copy',
    setup:
      'printf "%s" "$PASSWORD" | hortus user create --first-name Ana --last-name Grower --email ana@example.com --group greenhouse-1 --password-stdin',
    // Into a second SQLite file: the same command, no MongoDB server needed.
    substitute: [['mongodb://db-host:27017/hortus', './copy.db']],
    output: {
      0: [
        /copied \S*data\/hortus\.db -> \S*copy\.db in [\d.]+ s/,
        /resource\s+source\s+target\s+written\s+check\s+groups\s+\d+\s+\d+\s+\d+\s+ok/,
        /password hashes: identical on the target for every user/,
        /log-in on the target: ana@example\.com logged in/,
      ],
    },
  },
  { file: 'docs/cli.md', first: 'hortus keys create --name ops', substitute: [['<id>', firstKeyId]] },
  {
    file: 'docs/development.md',
    first: 'npx pnpm@10.34.9 run soak ',
    skip: { 2: 'runs for a minute (a soak)', 3: needsMongo },
  },
  { file: 'docs/operations.md', first: 'npx --yes pnpm@10.34.9 install', skip: { 1: needsMongo } },
  { file: 'docs/operations.md', first: 'PORT=80a AUTH=yes', exit: { 0: 2 } },
  {
    file: 'docs/performance.md',
    first: "curl -si 'http://127.0.0.1:8080/api/group/abo?group=demo' | grep -i etag",
    // The tag is the server's own: the second request sends the one the first got.
    substitute: [
      [
        `'If-None-Match: W/"/abo.demo.GNwbcPEx.1"'`,
        `"If-None-Match: $(curl -si '{url}/api/group/abo?group=demo' | sed -n 's/^etag: //Ip' | tr -d '\\r')"`,
      ],
    ],
    output: { 0: [/ETag: W\/"\/abo\.demo\.[\w-]+\.\d+"/i] },
  },
  {
    file: 'docs/performance.md',
    first: 'npx --yes pnpm@10.34.9 bench ',
    skip: { 2: 'a benchmark: minutes' },
  },
  { file: 'docs/security.md', first: 'hortus keys create --name ops', substitute: [['<id>', firstKeyId]] },
  {
    file: 'docs/stores.md',
    first: 'hortus readings export --group greenhouse-1',
    // The new store is a second SQLite file here: the same commands, no MongoDB server needed.
    substitute: [
      ['export MONGODB_URI=mongodb://localhost:27017/hortus', 'export HORTUS_DATA_DIR=./new-data'],
    ],
  },
  {
    file: 'docs/stores.md',
    first: 'hortus restore /var/backups/',
    setup: 'mkdir -p backups && hortus backup backups/hortus-2025-06-01.db',
    substitute: [['/var/backups/', './backups/']],
  },
];

export function planFor(block: DocBlock): BlockPlan | undefined {
  const first = block.commands[0]?.text ?? '';
  return plans.find((plan) => plan.file === block.file && first.startsWith(plan.first));
}

/** Plans whose block is gone or changed its first command: each must find its block, or it hides nothing. */
export function plansWithoutBlock(blocks: readonly DocBlock[]): string[] {
  return plans
    .filter((plan) => !blocks.some((block) => planFor(block) === plan && block.notRun === undefined))
    .map((plan) => `${plan.file}: ${plan.first}`);
}
