import 'reflect-metadata';
import { Container, ContainerModule } from 'inversify';
import {
  ACTION_REPOSITORY,
  AddActionLockout,
  ALERT_OUTBOX_REPOSITORY,
  AUDIT_LOG,
  ActionChanges,
  ACTION_HISTORY_REPOSITORY,
  AUTOMATION_LOG_REPOSITORY,
  type AutomationSet,
  type BoxSettings,
  AutomationEngine,
  BacktestAutomations,
  PreviewAutomations,
  CHANGE_FEED,
  type Clock,
  createCoreModule,
  CreateAction,
  CreateGroup,
  DeleteAction,
  DEVICE_REPOSITORY,
  ENGINE_STATE_REPOSITORY,
  STAGE_REPOSITORY,
  EvaluateAlerts,
  GetGroup,
  GROUP_REPOSITORY,
  ListActionLockouts,
  ListActionSafety,
  HISTORY_CHART_REPOSITORY,
  ListOpenNotifications,
  NOTIFICATION_REPOSITORY,
  READING_REPOSITORY,
  RecordReadings,
  RemoveActionLockout,
  RunAutomations,
  SCHEDULER,
  type Scheduler,
  SetActionLimit,
  SetActionSafety,
  SetActionValue,
  SetBoxAlert,
  SetTopicAlert,
  UpdateGroupSettings,
  USER_REPOSITORY,
} from '@hortus/core';
import { createMemoryStore, type MemoryStore } from '@hortus/adapter-memory';

/** The engine suites' server instances over one shared memory store, and their rules. */
export class FakeClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(iso: string): void {
    this.current = new Date(iso);
  }
}

export type SharedStore = MemoryStore;
export const sharedStore = createMemoryStore;

export const noScheduler: Scheduler = {
  every: () => {
    throw new Error('tests drive ticks by hand');
  },
};

/** One server instance: its own container and clock, over a store that instances may share. */
export function instance(
  store: SharedStore,
  clock: FakeClock,
  timeZone = 'Europe/Berlin',
  scheduler: Scheduler = noScheduler,
  boxes: Partial<BoxSettings> = {},
) {
  const container = new Container();
  container.load(
    createCoreModule({ timeZone, commitsCacheMs: 60_000, automation: { deadBand: 0.5 }, boxes }, clock),
    new ContainerModule(({ bind }) => {
      bind(READING_REPOSITORY).toConstantValue(store.readings);
      bind(ACTION_REPOSITORY).toConstantValue(store.actions);
      bind(DEVICE_REPOSITORY).toConstantValue(store.devices);
      bind(NOTIFICATION_REPOSITORY).toConstantValue(store.notifications);
      bind(HISTORY_CHART_REPOSITORY).toConstantValue(store.historyCharts);
      bind(GROUP_REPOSITORY).toConstantValue(store.groups);
      bind(USER_REPOSITORY).toConstantValue(store.users);
      bind(ENGINE_STATE_REPOSITORY).toConstantValue(store.engineState);
      bind(AUTOMATION_LOG_REPOSITORY).toConstantValue(store.automationLog);
      bind(ACTION_HISTORY_REPOSITORY).toConstantValue(store.actionHistory);
      bind(STAGE_REPOSITORY).toConstantValue(store.stages);
      bind(ALERT_OUTBOX_REPOSITORY).toConstantValue(store.alertOutbox);
      bind(AUDIT_LOG).toConstantValue(store.auditLog);
      bind(CHANGE_FEED).toConstantValue(store.changeFeed);
      bind(SCHEDULER).toConstantValue(scheduler);
    }),
  );
  return {
    run: container.get(RunAutomations),
    alerts: container.get(EvaluateAlerts),
    engine: container.get(AutomationEngine),
    setValue: container.get(SetActionValue),
    setLimit: container.get(SetActionLimit),
    setSafety: container.get(SetActionSafety),
    listSafety: container.get(ListActionSafety),
    addLockout: container.get(AddActionLockout),
    removeLockout: container.get(RemoveActionLockout),
    listLockouts: container.get(ListActionLockouts),
    setTopicAlert: container.get(SetTopicAlert),
    setBoxAlert: container.get(SetBoxAlert),
    updateSettings: container.get(UpdateGroupSettings),
    record: container.get(RecordReadings),
    openNotifications: container.get(ListOpenNotifications),
    changes: container.get(ActionChanges),
    createGroup: container.get(CreateGroup),
    getGroup: container.get(GetGroup),
    createAction: container.get(CreateAction),
    deleteAction: container.get(DeleteAction),
    preview: container.get(PreviewAutomations),
    backtest: container.get(BacktestAutomations),
  };
}

export type Instance = ReturnType<typeof instance>;

export async function greenhouse(
  server: Instance,
  automations: AutomationSet[],
  settings: unknown = [],
): Promise<void> {
  await server.createGroup.execute({ name: 'gh', settings });
  await server.createAction.execute({ group: 'gh', object: 'pump_1', value: 'off', automations });
}

export const timeRule = (time: string, frequency: string, action = 'on'): AutomationSet[] =>
  [{ timeAutomations: [{ action, time, frequency }], sensorAutomations: [] }] as AutomationSet[];

export const sensorRule = (condition: string, value: string, action = 'on'): AutomationSet[] =>
  [
    { timeAutomations: [], sensorAutomations: [{ action, sensor: 'temperature', condition, value }] },
  ] as AutomationSet[];

export async function pumpValue(store: SharedStore): Promise<string | undefined> {
  return (await store.actions.find('gh', 'pump_1'))?.value;
}
