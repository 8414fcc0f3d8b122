import { type Device, devicesOf, optionalGet, post } from '../api.js';
import { mayAdminister, type Session } from '../session.js';
import { age, Problem, Status, useLoad, usePress } from '../util.js';

/** GET /api/admin/boxes/pending (docs/api.md, Administration). */
interface Pending {
  readonly boxId: string;
  readonly mac?: string;
  readonly label?: string;
  readonly firstSeenAt?: string;
  readonly lastSeenAt?: string;
  readonly attempts?: number;
  readonly firmwareVersion?: string;
  readonly address?: string;
}

/** The administrators' list of boxes that asked to join (roles' admin routes), when the server has it. */
async function pendingBoxes(): Promise<Pending[] | undefined> {
  return optionalGet<Pending[]>('/api/admin/boxes/pending');
}

function AdminButton(props: { label: string; path: string; body: unknown; onDone: () => void }) {
  const press = usePress();
  return (
    <>
      <button
        type="button"
        aria-disabled={press.busy}
        onClick={() => press.run(() => post(props.path, props.body), props.onDone)}
      >
        {props.label}
      </button>
      <Problem text={press.problem} />
    </>
  );
}

export function BoxesPage(props: { session: Session; group: string | undefined }) {
  const groups = props.group === undefined ? props.session.groups : [props.group];
  const admin = mayAdminister(props.session);
  const loaded = useLoad(
    async () => {
      const devices = (await Promise.all(groups.map(devicesOf))).flat();
      const pending = admin ? await pendingBoxes().catch(() => undefined) : undefined;
      return { devices, pending };
    },
    [groups.join(','), admin],
    30_000,
  );
  const id = (device: Device): string => encodeURIComponent(device.deviceId);
  return (
    <>
      <h1>Boxes{props.group === undefined ? '' : ` of ${props.group}`}</h1>
      <Status loaded={loaded}>
        {(data) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Box</th>
                  <th scope="col">Group</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">Address</th>
                  <th scope="col">Firmware</th>
                  <th scope="col">State</th>
                  {admin && <th scope="col">Manage</th>}
                </tr>
              </thead>
              <tbody>
                {data.devices.map((device) => (
                  <tr key={device.deviceId}>
                    <th scope="row">
                      {device.deviceId}
                      {device.type === undefined ? '' : ` (${device.type})`}
                    </th>
                    <td>{device.group}</td>
                    <td>{age(device.lastSeen)}</td>
                    <td>{device.address ?? device.macAddress ?? '—'}</td>
                    <td>{device.firmwareVersion ?? '—'}</td>
                    <td>
                      {[
                        device.silent === true ? 'silent' : 'online',
                        device.locked === true ? 'locked' : '',
                      ].join(' ')}
                    </td>
                    {admin && (
                      <td>
                        <AdminButton
                          label={
                            device.locked === true ? `Unlock ${device.deviceId}` : `Lock ${device.deviceId}`
                          }
                          path={`/api/admin/boxes/${id(device)}/${device.locked === true ? 'unlock' : 'lock'}`}
                          body={{}}
                          onDone={loaded.reload}
                        />{' '}
                        <AdminButton
                          label={`Rotate key of ${device.deviceId}`}
                          path={`/api/admin/boxes/${id(device)}/rotate-key`}
                          body={{}}
                          onDone={loaded.reload}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
            {admin && (
              <>
                <h2>Pending boxes</h2>
                <p>
                  A new box asks to join when it starts: power it off and on again if it is not listed here.
                </p>
                {data.pending === undefined ? (
                  <p class="muted">This server lists pending boxes with `hortus device pending` only.</p>
                ) : data.pending.length === 0 ? (
                  <p>No box is waiting.</p>
                ) : (
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">MAC</th>
                        <th scope="col">Last seen</th>
                        <th scope="col">Firmware</th>
                        <th scope="col">Claim into {groups[0] ?? ''}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.pending.map((box) => (
                        <tr key={box.boxId}>
                          <th scope="row">{box.label ?? box.mac ?? box.boxId}</th>
                          <td>{age(box.lastSeenAt)}</td>
                          <td>{box.firmwareVersion ?? '—'}</td>
                          <td>
                            <AdminButton
                              label="Claim"
                              path={`/api/admin/boxes/${encodeURIComponent(box.boxId)}/claim`}
                              body={{ group: groups[0] }}
                              onDone={loaded.reload}
                            />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </>
            )}
          </>
        )}
      </Status>
    </>
  );
}
