import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { signIn } from '../session.js';

export function SignIn(props: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = (event: Event): void => {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    signIn(email, password).then(
      () => {
        setBusy(false);
        props.onSignedIn();
      },
      (error: unknown) => {
        setBusy(false);
        setProblem(
          error instanceof ApiError && error.status === 401
            ? 'The e-mail or the password is wrong.'
            : error instanceof Error
              ? error.message
              : String(error),
        );
      },
    );
  };
  return (
    <main id="main" class="sign-in">
      <h1>Hortus console</h1>
      <form onSubmit={submit}>
        <label for="email">E-mail</label>
        <input
          id="email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(event) => setEmail(event.currentTarget.value)}
        />
        <label for="password">Password</label>
        <input
          id="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {problem !== undefined && (
          <p role="alert" class="error">
            {problem}
          </p>
        )}
      </form>
    </main>
  );
}
