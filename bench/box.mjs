/** The six topics of a sensor box: the capacity part's boxes send them, and its groups are seeded with them. */
export const BOX_TOPICS = [
  'esp/air/temperature',
  'esp/air/humidity',
  'esp/ground/light/lux',
  'esp/ground/moisture/1',
  'esp/ground/moisture/2',
  'esp/ground/moisture/3',
];
