import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { whenUnauthorized } from './api.js';
import { currentSession, type Session, signOut } from './session.js';
import { link } from './util.js';
import { SignIn } from './pages/sign-in.js';
import { Overview } from './pages/overview.js';
import { GroupPage } from './pages/group.js';
import { ChartsPage } from './pages/charts.js';
import { BoxesPage } from './pages/boxes.js';
import { AutomationsPage } from './pages/automations.js';
import { AlertsPage } from './pages/alerts.js';

/** Hash routes (#/group/demo): the server answers one page, and a reload lands where it was. */
function useRoute(): string[] {
  const read = (): string[] =>
    location.hash
      .replace(/^#\/?/u, '')
      .split('/')
      .filter((part) => part !== '')
      .map((part) => decodeURIComponent(part));
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = (): void => setRoute(read());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function Nav(props: { session: Session; group: string | undefined; onSignOut: () => void }) {
  const group = props.group ?? props.session.groups[0];
  const pages: [string, string][] = [['Overview', link()]];
  if (group !== undefined) {
    pages.push(['Group', link('group', group)], ['Charts', link('charts', group)]);
    pages.push(['Automations', link('automations', group)], ['Alerts', link('alerts', group)]);
  }
  pages.push(['Boxes', link('boxes', ...(group === undefined ? [] : [group]))]);
  return (
    <header>
      <nav aria-label="Pages">
        <span class="brand">Hortus</span>
        <ul>
          {pages.map(([name, href]) => (
            <li key={name}>
              <a href={href}>{name}</a>
            </li>
          ))}
        </ul>
        <span class="who">
          {props.session.signedIn ? `${props.session.email ?? 'signed in'} (${props.session.role})` : ''}
          {props.session.signedIn && (
            <button type="button" class="link" onClick={props.onSignOut}>
              Sign out
            </button>
          )}
        </span>
      </nav>
    </header>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const route = useRoute();
  const refresh = useCallback(() => {
    currentSession().then(setSession, (error: unknown) =>
      setFailure(error instanceof Error ? error.message : String(error)),
    );
  }, []);
  useEffect(() => {
    whenUnauthorized(refresh);
    refresh();
  }, [refresh]);
  useEffect(() => {
    const title = route[0] === undefined ? 'Overview' : route[0][0]?.toUpperCase() + route[0].slice(1);
    document.title = `${title} · Hortus console`;
  }, [route]);

  if (failure !== undefined) return <p role="alert">The console cannot reach the server: {failure}</p>;
  if (session === undefined) return <p>Loading…</p>;
  if (session.accessControl && !session.signedIn) return <SignIn onSignedIn={refresh} />;
  const [page, group] = route;
  const content = ((): preact.ComponentChildren => {
    if (page === 'group' && group !== undefined) return <GroupPage session={session} group={group} />;
    if (page === 'charts' && group !== undefined) return <ChartsPage session={session} group={group} />;
    if (page === 'automations' && group !== undefined)
      return <AutomationsPage session={session} group={group} />;
    if (page === 'alerts' && group !== undefined) return <AlertsPage session={session} group={group} />;
    if (page === 'boxes') return <BoxesPage session={session} group={group} />;
    return <Overview session={session} onGroupsChanged={refresh} />;
  })();
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          // The hash is the route: following #main would open the overview. Move the focus instead.
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <Nav
        session={session}
        group={group}
        onSignOut={() => {
          void signOut().then(refresh);
        }}
      />
      {!session.accessControl && (
        <p class="warning" role="note">
          Access control is off: anyone on the network can use this console and switch the devices.
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(<App />, root);
}
