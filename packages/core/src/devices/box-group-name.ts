/**
 * What firmware 1.0.4 cannot carry in a group name: it pastes the name from the onboarding answer, unescaped,
 * between quotes in the JSON of every reading (COMPAT "Boxes"), so a `"`, a `\` or a control character makes
 * each reading invalid JSON.
 */
// eslint-disable-next-line no-control-regex -- control characters are what JSON refuses unescaped
const unpastable = /["\\\u0000-\u001f]/gu;

/**
 * The group name a box is told at onboarding: the group's name with each character the firmware cannot paste
 * replaced by `_`. The box only echoes it back: its readings are filed under its device's group, found by its
 * key, whatever the document says.
 */
export function boxGroupName(name: string): string {
  return name.replace(unpastable, '_');
}

/** Whether firmware 1.0.4 boxes are told this group's name as it is (else boxGroupName tells them). */
export function isBoxPastable(name: string): boolean {
  return boxGroupName(name) === name;
}
