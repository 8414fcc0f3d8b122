import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../src/app/config.js';
import {
  dockerRunExample,
  envOf,
  publishedPort,
  readCompose,
  readDockerfile,
  root,
  type ComposeService,
  type Stage,
} from './recipes.js';

// What the container recipes publish and set, read from the files (no container engine runs here): boxes post
// to https://host:8443, Home Assistant and boxes reach Mosquitto on 1883, backups land on a volume, and the
// settings each recipe gives pass Hortus's own settings parsers. container-recipe.test.ts runs the image.

const secret = 'a-compose-secret-that-is-long-enough-0000';
const stages = readDockerfile();
const final = stages.at(-1) as Stage;
const imageEnv = envOf(final);

function service(name: string): ComposeService {
  const found = readCompose({ AUTH_SECRET: secret }).services[name];
  expect(found, name).to.be.an('object');
  return found as ComposeService;
}

/** The named volume mounted at `path` in a service, checked to be declared at the top level. */
function namedVolumeAt(mounts: readonly string[] | undefined, path: string): string {
  const mount = (mounts ?? []).find((entry) => entry.split(':')[1] === path);
  expect(mount, `a volume at ${path}`).to.be.a('string');
  const name = (mount as string).split(':')[0] as string;
  expect(name, `${path} on a named volume`).to.match(/^[\w-]+$/u);
  expect(Object.keys(readCompose({ AUTH_SECRET: secret }).volumes ?? {})).to.include(name);
  return name;
}

describe('the container recipes, read: boxes, Home Assistant and backups out of the box', () => {
  it('when the Dockerfile is read, then the image exposes 8080 and 8443, keeps /data and /backups as volumes, sets BACKUP_DIR and HTTPS_PORT, and has `hortus` on its PATH', () => {
    const exposed = final.instructions
      .filter(({ keyword }) => keyword === 'EXPOSE')
      .flatMap(({ args }) => args.split(/\s+/u));
    expect(exposed).to.include.members(['8080', '8443']);
    const volumes = final.instructions
      .filter(({ keyword }) => keyword === 'VOLUME')
      .flatMap(({ args }) => args.split(/\s+/u));
    expect(volumes).to.include.members(['/data', '/backups']);
    expect(imageEnv).to.include({ BACKUP_DIR: '/backups', HTTPS_PORT: '8443', HORTUS_DATA_DIR: '/data' });
    expect(imageEnv['PATH']?.split(':')[0]).to.equal('/app/bin');
    const runs = (stages[0] as Stage).instructions
      .filter(({ keyword }) => keyword === 'RUN')
      .map(({ args }) => args);
    expect(runs.join('\n')).to.match(/ln -s hortus\.js \.\.\/app\/bin\/hortus\b/u);
  });

  it('when compose.yaml is read, then every service restarts unless stopped', () => {
    const { services } = readCompose({ AUTH_SECRET: secret });
    expect(Object.keys(services)).to.include.members(['hortus', 'mongo', 'backup', 'mosquitto']);
    for (const [name, { restart }] of Object.entries(services))
      expect(restart, name).to.equal('unless-stopped');
  });

  it('when compose.yaml is read with no variables but AUTH_SECRET, then Hortus publishes 8080 and 8443 with TLS on, the port boxes are told is the one published, and its data is on a named volume', () => {
    const hortus = service('hortus');
    const ports = (hortus.ports ?? []).map(publishedPort);
    expect(ports).to.deep.include({ host: 8080, container: 8080 });
    expect(ports).to.deep.include({ host: 8443, container: 8443 });
    const env = hortus.environment ?? {};
    expect(env).to.include({ TLS: 'self-signed', HTTPS_PORT: '8443', AUTH_SECRET: secret });
    expect(env['ALLOWED_HOSTS']).to.not.equal('');
    namedVolumeAt(hortus.volumes, '/data');
    // No healthcheck of its own that could replace or disable the image's HEALTHCHECK.
    expect(hortus.healthcheck).to.equal(undefined);
    expect(final.instructions.some(({ keyword }) => keyword === 'HEALTHCHECK')).to.equal(true);
  });

  it('when compose.yaml names other ports, then the HTTPS port boxes are told still matches the published one', () => {
    const hortus = readCompose({ AUTH_SECRET: secret, HORTUS_HTTPS_PORT: '9443' }).services['hortus'];
    expect((hortus?.ports ?? []).map(publishedPort)).to.deep.include({ host: 9443, container: 9443 });
    expect(hortus?.environment?.['HTTPS_PORT']).to.equal('9443');
  });

  it("when compose.yaml is read, then Hortus publishes Home Assistant discovery on HA's prefix through Mosquitto, which is published on 1883 with a config in deploy/mosquitto that takes clients from outside", () => {
    const env = service('hortus').environment ?? {};
    expect(env).to.include({
      MQTT_URL: 'mqtt://mosquitto:1883',
      MQTT_DISCOVERY: 'on',
      MQTT_DISCOVERY_PREFIX: 'homeassistant',
      // Its broker takes anonymous clients: nobody on the network may switch a pump through it by default.
      MQTT_COMMANDS: 'off',
    });
    const mosquitto = service('mosquitto');
    expect((mosquitto.ports ?? []).map(publishedPort)).to.deep.include({ host: 1883, container: 1883 });
    const config = (mosquitto.volumes ?? []).find((mount) => mount.split(':')[1] === '/mosquitto/config');
    expect(config).to.match(/^\.\/mosquitto:\/mosquitto\/config(:ro)?$/u);
    const conf = readFileSync(join(root, 'deploy/mosquitto/mosquitto.conf'), 'utf8');
    // Mosquitto 2 listens on loopback alone and refuses anonymous clients without these lines.
    expect(conf)
      .to.match(/^listener 1883$/mu)
      .and.match(/^allow_anonymous true$/mu);
    const persistence = /^persistence_location (\S+)$/mu.exec(conf)?.[1] ?? '';
    namedVolumeAt(mosquitto.volumes, persistence.replace(/\/$/u, ''));
  });

  it('when compose.yaml is read, then the MongoDB store is dumped to a named volume by a script that parses, and Hortus does not ask for SQLite backups it cannot make', () => {
    const hortus = service('hortus');
    expect(hortus.environment?.['BACKUP_DIR']).to.equal('');
    const backup = service('backup');
    expect(backup.image).to.equal(service('mongo').image);
    const volume = namedVolumeAt(backup.volumes, '/backups');
    expect(volume).to.not.equal('mongo-data');
    const script = [...(backup.entrypoint ?? []), ...[backup.command ?? []].flat()];
    expect(script.slice(0, 2)).to.deep.equal(['sh', '-c']);
    const body = script[2] ?? '';
    expect(body).to.include(`mongodump --quiet --uri=${hortus.environment?.['MONGODB_URI'] ?? '?'} `);
    expect(body).to.include('/backups/hortus-');
    const parsed = spawnSync('sh', ['-n', '-c', body], { encoding: 'utf8' });
    expect(parsed.status, parsed.stderr).to.equal(0);
  });

  it("when compose.yaml's and the image's settings are read by Hortus's own parsers, then they pass: TLS self-signed, MQTT discovery, the store on MongoDB", () => {
    const env = { ...imageEnv, ...service('hortus').environment };
    const config = loadConfig(env);
    expect(config.tls).to.deep.equal({ mode: 'self-signed' });
    expect(config.httpsPort).to.equal(8443);
    expect(config.mqtt).to.include({
      url: 'mqtt://mosquitto:1883',
      discovery: true,
      discoveryPrefix: 'homeassistant',
    });
    expect(config.store).to.equal('mongodb');
    expect(config.backups).to.equal(undefined);
  });

  it('when the docker run example of docs/deployment.md is read, then it runs the image built as `hortus`, publishes 8080 and 8443, keeps /data and /backups on volumes, turns TLS and Home Assistant discovery on, and its settings pass', () => {
    const run = dockerRunExample();
    const doc = readFileSync(join(root, 'docs/deployment.md'), 'utf8');
    expect(doc).to.include(`docker build -f deploy/Dockerfile -t ${run.image} .`);
    expect(run.ports.map(publishedPort)).to.deep.include.members([
      { host: 8080, container: 8080 },
      { host: 8443, container: 8443 },
    ]);
    for (const path of ['/data', '/backups']) {
      const mount = run.volumes.find((entry) => entry.split(':')[1] === path);
      expect(mount, path).to.match(/^[\w-]+:\//u);
    }
    expect(run.env).to.include({
      TLS: 'self-signed',
      MQTT_DISCOVERY: 'on',
      MQTT_DISCOVERY_PREFIX: 'homeassistant',
    });
    expect(run.env).to.have.property('AUTH_SECRET');
    const env = Object.fromEntries(
      Object.entries({ ...imageEnv, ...run.env }).map(([key, value]) => [key, value ?? secret]),
    );
    const config = loadConfig(env);
    expect(config.tls).to.deep.equal({ mode: 'self-signed' });
    expect(config.mqtt).to.include({ discovery: true });
    expect(config.store).to.equal('sqlite');
    expect(config.backups?.dir).to.equal('/backups');
  });
});
