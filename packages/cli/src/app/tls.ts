import { webcrypto, X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type TlsMaterial, type TlsSettings } from '@hortus/http-koa/settings';

/** Where TLS=self-signed keeps its certificate and key, inside the data directory. */
export const SELF_SIGNED_DIR = 'tls';
export const SELF_SIGNED_CERT = 'self-signed-cert.pem';
export const SELF_SIGNED_KEY = 'self-signed-key.pem';
/** Boxes never check expiry; browsers and curl are told to ignore a self-signed certificate anyway. */
const SELF_SIGNED_DAYS = 3650;

export interface LoadedCertificate extends TlsMaterial {
  /** SHA-256 fingerprint as `AB:CD:…`, what an operator compares with a browser's or `openssl x509`'s. */
  readonly fingerprint: string;
  readonly created: boolean;
  readonly source: string;
}

/**
 * The certificate and key TLS settings name: the operator's files as they are now (read again on every
 * call, so SIGHUP picks up a renewed certificate), or the self-signed pair in `dataDir`, created on the
 * first call and reused after that.
 */
export async function loadCertificate(
  settings: Exclude<TlsSettings, { mode: 'off' }>,
  dataDir: string,
): Promise<LoadedCertificate> {
  if (settings.mode === 'files') {
    // Both are read before either failure is told, so the message names every file that cannot be read,
    // the same whichever read finished first.
    const [cert, key] = await Promise.allSettled([
      readPem(settings.certFile, 'TLS_CERT_FILE'),
      readPem(settings.keyFile, 'TLS_KEY_FILE'),
    ]);
    if (cert.status === 'rejected' || key.status === 'rejected') {
      const failed = [cert, key].flatMap((read) =>
        read.status === 'rejected' ? [read.reason as Error] : [],
      );
      throw new Error(failed.map((error) => error.message).join('; '), { cause: failed[0] });
    }
    return {
      cert: cert.value,
      key: key.value,
      fingerprint: fingerprintOf(cert.value),
      created: false,
      source: settings.certFile,
    };
  }
  const directory = join(dataDir, SELF_SIGNED_DIR);
  const certFile = join(directory, SELF_SIGNED_CERT);
  const keyFile = join(directory, SELF_SIGNED_KEY);
  const existing = await readPair(certFile, keyFile);
  if (existing !== undefined) {
    return { ...existing, fingerprint: fingerprintOf(existing.cert), created: false, source: certFile };
  }
  const pair = await createSelfSigned();
  await mkdir(directory, { recursive: true, mode: 0o700 });
  // The key first and each file complete before it gets its name: a crash leaves no half pair behind.
  await writePrivate(keyFile, pair.key);
  await writePrivate(certFile, pair.cert);
  return { ...pair, fingerprint: fingerprintOf(pair.cert), created: true, source: certFile };
}

async function readPem(file: string, variable: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new Error(`${variable}: cannot read ${file} (${code})`, { cause: error });
  }
}

async function readPair(certFile: string, keyFile: string): Promise<TlsMaterial | undefined> {
  try {
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    return { cert, key };
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writePrivate(file: string, text: string): Promise<void> {
  const partial = `${file}.partial`;
  await writeFile(partial, text, { mode: 0o600 });
  // The mode given to writeFile passes through the umask; 0600 is what is meant whatever it is.
  await chmod(partial, 0o600);
  await rename(partial, file);
}

export function fingerprintOf(cert: string | Buffer): string {
  try {
    return new X509Certificate(cert).fingerprint256;
  } catch (error) {
    throw new Error(`not a PEM certificate: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

const signing = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * An ECDSA P-256 key and a certificate for it, signed by itself: a P-256 handshake costs the server a
 * fraction of an RSA-2048 one. Its names are this machine's and localhost; boxes do not check names.
 */
async function createSelfSigned(): Promise<{ cert: string; key: string }> {
  // Loaded only here: most servers never create a certificate.
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const keys = await webcrypto.subtle.generateKey(signing, true, ['sign', 'verify']);
  const name = hostname() || 'hortus';
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
      .toString('hex')
      .replace(/^[89a-f]/u, '1'),
    name: `CN=${name.replace(/[,=+<>#;"\\]/gu, '-')}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + SELF_SIGNED_DAYS * 86_400_000),
    keys,
    signingAlgorithm: signing,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: name },
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { cert: certificate.toString('pem'), key: pem('PRIVATE KEY', pkcs8) };
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/gu) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
