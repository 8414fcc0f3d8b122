import {
  ACCOUNT_SETTINGS,
  type AccountSettings,
  COMMON_PASSWORDS,
  type CommonPasswords,
  ConfigError,
  defaultAccountSettings,
  type Env,
  envReader,
  ONE_TIME_TOKENS,
  type OneTimeTokens,
  PASSWORD_HASHER,
  type PasswordHasher,
  type SignupMode,
  signupModes,
  TOKEN_SERVICE,
  type TokenService,
} from '@hortus/core';
import { ContainerModule } from 'inversify';
import {
  BcryptPasswordHasher,
  DEFAULT_BCRYPT_COST,
  MAX_BCRYPT_COST,
  MIN_BCRYPT_COST,
} from './bcrypt-password-hasher.js';
import {
  JwtTokenService,
  MIN_AUTH_SECRET_LENGTH,
  TOKEN_SETTINGS,
  type TokenSettings,
} from './jwt-token-service.js';
import { NodeOneTimeTokens } from './one-time-tokens.js';
import { RankedCommonPasswords } from './common-passwords.js';

export interface IdentitySettings {
  readonly accounts: AccountSettings;
  readonly tokens: TokenSettings;
  readonly bcryptCost: number;
  /** Threads that hash passwords; by default chosen from the machine's cores. */
  readonly bcryptThreads?: number;
}

export const identityDefaults = {
  APP_URL: defaultAccountSettings.appUrl,
  SIGNUP: defaultAccountSettings.signup,
  BCRYPT_COST: String(DEFAULT_BCRYPT_COST),
  SIGNUPS_PER_ADDRESS: String(defaultAccountSettings.maxSignupsPerAddress),
  SIGNUPS_TOTAL: String(defaultAccountSettings.maxSignups),
} as const;

/**
 * Reads AUTH_SECRET, APP_URL, SIGNUP, BCRYPT_COST and the sign-up limits (SIGNUPS_PER_ADDRESS,
 * SIGNUPS_TOTAL: per 15 minutes, 0 for none); every bad value is reported at once.
 */
export function identitySettingsFromEnv(env: Env): IdentitySettings {
  const problems: string[] = [];
  const { read, optional, integer } = envReader(env, identityDefaults, problems);
  const secret = optional('AUTH_SECRET');
  if (secret !== undefined && secret.length < MIN_AUTH_SECRET_LENGTH) {
    problems.push(
      `AUTH_SECRET must be at least ${MIN_AUTH_SECRET_LENGTH} characters (e.g. openssl rand -base64 32)`,
    );
  }
  const appUrl = read('APP_URL').replace(/\/+$/u, '');
  if (!/^https?:\/\/[^\s/]+(\/\S*)?$/u.test(appUrl)) {
    problems.push(`APP_URL must be the web client's http(s) address, got "${appUrl}"`);
  }
  const signupText = read('SIGNUP').toLowerCase();
  const signup = (signupModes as readonly string[]).includes(signupText)
    ? (signupText as SignupMode)
    : 'invite';
  if (signup !== signupText)
    problems.push(`SIGNUP must be one of: ${signupModes.join(', ')}, got "${read('SIGNUP')}"`);
  const bcryptCost = integer('BCRYPT_COST', MIN_BCRYPT_COST, MAX_BCRYPT_COST);
  const maxSignupsPerAddress = integer('SIGNUPS_PER_ADDRESS', 0, 1_000_000);
  const maxSignups = integer('SIGNUPS_TOTAL', 0, 1_000_000);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    accounts: { ...defaultAccountSettings, appUrl, signup, maxSignupsPerAddress, maxSignups },
    tokens: secret === undefined ? {} : { secret },
    bcryptCost,
  };
}

/**
 * Binds the account ports: bcrypt on worker threads, JWT sessions and invitations, reset tokens, and the
 * account settings. The token signer reads a generated secret from the store (SERVER_SECRET_REPOSITORY)
 * when AUTH_SECRET is not set.
 */
export function identityModule(settings: IdentitySettings): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<AccountSettings>(ACCOUNT_SETTINGS).toConstantValue(settings.accounts);
    bind<TokenSettings>(TOKEN_SETTINGS).toConstantValue(settings.tokens);
    bind<PasswordHasher>(PASSWORD_HASHER).toConstantValue(
      new BcryptPasswordHasher({
        cost: settings.bcryptCost,
        ...(settings.bcryptThreads === undefined ? {} : { threads: settings.bcryptThreads }),
      }),
    );
    bind<TokenService>(TOKEN_SERVICE).to(JwtTokenService).inSingletonScope();
    bind<OneTimeTokens>(ONE_TIME_TOKENS).toConstantValue(new NodeOneTimeTokens());
    // Loaded when a password is first checked: commands that never set one do not read the list.
    bind<CommonPasswords>(COMMON_PASSWORDS)
      .toDynamicValue(() => new RankedCommonPasswords())
      .inSingletonScope();
  });
}
