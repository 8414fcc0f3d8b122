import { inject, injectable } from 'inversify';
import { ACTION_REPOSITORY, type ActionRepository } from '../actions/action.port.js';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { NOTIFICATION_REPOSITORY, type NotificationRepository } from '../notifications/notification.port.js';
import { READING_REPOSITORY, type ReadingRepository } from '../readings/reading.port.js';
import { requireText } from '../shared/validation.js';

/** What a polled answer about one group is made of. */
export const revisionSubjects = ['readings', 'actions', 'group', 'notifications'] as const;
export type RevisionSubject = (typeof revisionSubjects)[number];

/**
 * The store's revision of one part of a group: it changes with every write to that part, whoever writes
 * (HTTP, CLI, MQTT, the automation engine), because the repositories keep it. Transports turn it into an
 * entity tag, so a client polling an unchanged group gets "not modified" without the answer being built.
 */
@injectable()
export class GetRevision {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(ACTION_REPOSITORY) private readonly actions: ActionRepository,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(NOTIFICATION_REPOSITORY) private readonly notifications: NotificationRepository,
  ) {}

  /** Not async: it hands on the repository's promise, sparing every poll a promise of its own to adopt it. */
  execute(input: { group: unknown; subject: RevisionSubject }): Promise<string> {
    let group: string;
    try {
      group = requireText(input.group, 'group');
    } catch (error) {
      return Promise.reject(error);
    }
    switch (input.subject) {
      case 'readings':
        return this.readings.revision(group);
      case 'actions':
        return this.actions.revision(group);
      case 'group':
        return this.groups.revision(group);
      case 'notifications':
        return this.notifications.revision(group);
    }
  }
}
