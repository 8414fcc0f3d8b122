/** The six topics of a sensor box: the capacity part's boxes send them, and its groups are seeded with them. */
export const BOX_TOPICS = [
  'esp/air/temperature',
  'esp/air/humidity',
  'esp/ground/light/lux',
  'esp/ground/moisture/1',
  'esp/ground/moisture/2',
  'esp/ground/moisture/3',
];

/**
 * A value of the topic inside the limits the capacity part's groups set (temperature 15 to 30, soil moisture
 * 30 to 70), so the automation engine raises no alert: a notification would change what every poll sees.
 */
export function quietValue(topic, index) {
  return (topic.includes('moisture') ? 45 : 20) + index;
}
