import { readFile } from 'node:fs/promises';
import {
  AssignStage,
  type Band,
  ClearStage,
  GetStage,
  InvalidInputError,
  type RecipeStage,
  type StageStarted,
  type StageView,
} from '@hortus/core';
import { type Command } from 'commander';
import { parse } from 'yaml';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, localTime, say, table } from '../output.js';
import { consoleActor, outputFor, storeFor, withExamples } from './shared.js';

interface StageOptions {
  recipe?: string;
  stage?: string;
  started?: string;
  clear?: boolean;
}

/** A recipe file: YAML, or JSON (which YAML reads as well). */
async function readRecipe(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the recipe ${path}: ${(error as Error).message}`);
  }
  try {
    return parse(text) as unknown;
  } catch (error) {
    const first = ((error as Error).message.split('\n')[0] ?? '').trim();
    throw InvalidInputError.forField('recipe', `${path} is neither YAML nor JSON: ${first}`);
  }
}

const bandText = (band: Band | undefined, unit: string): string =>
  band === undefined
    ? '-'
    : band.min === undefined
      ? `at most ${String(band.max)} ${unit}`
      : band.max === undefined
        ? `at least ${String(band.min)} ${unit}`
        : `${String(band.min)} to ${String(band.max)} ${unit}`;

function stageFields(stage: RecipeStage): [string, unknown][] {
  return [
    ['Temperature', bandText(stage.temperature, '°C')],
    ['Humidity', bandText(stage.humidity, '%')],
    ['VPD', bandText(stage.vpd, 'kPa')],
    ['DLI', bandText(stage.dli, 'mol/m²/d')],
    ['Photoperiod', stage.photoperiod === undefined ? '-' : `${String(stage.photoperiod)} h of light`],
    [
      'Thresholds',
      stage.rules.length === 0
        ? '-'
        : stage.rules
            .map((r) => `${r.object} ${r.action} when ${r.sensor} ${r.condition} ${String(r.value)}`)
            .join('; '),
    ],
  ];
}

function showView(view: StageView | undefined, group: string): string {
  if (view === undefined) return say`Group ${group} has no recipe.`;
  const length = view.stage.days === undefined ? '' : ` of ${String(view.stage.days)}`;
  return fields([
    ['Group', view.group],
    ['Recipe', view.recipe],
    ...(view.source === undefined ? [] : [['Source', view.source] as [string, unknown]]),
    ['Stage', `${view.stage.name} (day ${String(view.day)}${length})`],
    ['Started', view.startedAt],
    [
      'Next',
      view.next === undefined
        ? '- (last stage)'
        : view.endsAt === undefined
          ? `${view.next}, by hand`
          : `${view.next} on ${localTime(view.endsAt)}`,
    ],
    ['Stages', view.stages.join(', ')],
    ...stageFields(view.stage),
    ['Written', view.applied ? (view.appliedAt ?? 'yes') : 'not yet (the engine writes it within a minute)'],
  ]);
}

function showStarted(result: StageStarted): string {
  const lines = [
    say`Group ${result.group}: stage ${result.stage} of ${result.recipe} started.`,
    result.ranges.length === 0
      ? 'No alert ranges changed.'
      : table(
          ['TOPIC', 'MIN', 'MAX'],
          result.ranges.map((range) => [range.topic, range.min ?? '-', range.max ?? '-']),
        ),
    `Rule thresholds: ${String(result.rulesUpdated)} changed, ${String(result.rulesAdded)} added.`,
  ];
  if (result.missingActions.length > 0)
    lines.push(say`Not in the group (their thresholds were skipped): ${result.missingActions.join(', ')}.`);
  return lines.join('\n');
}

export function registerGroupStageCommand(group: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    group
      .command('stage')
      .description(
        "show or set a group's crop recipe and stage: the stage's target bands become the group's alert " +
          'ranges and its thresholds go into the rules when it starts; stages with a length in days move on ' +
          'by date (docs/recipes.md)',
      )
      .argument('<group>', 'group name')
      .option('--recipe <file>', 'the recipe, a YAML or JSON file (kept in the store: the file is read once)')
      .option('--stage <name>', 'the stage to start (with --recipe: default its first stage)')
      .option('--started <date>', 'when the stage started: a date (2026-03-01) or date-time (default: now)')
      .option('--clear', 'drop the recipe; the alert ranges and thresholds stay as they are')
      .action(async (name: string, options: StageOptions, command: Command) => {
        const changes =
          options.recipe !== undefined || options.stage !== undefined || options.started !== undefined;
        if (options.clear === true) {
          if (changes) throw new UsageError('--clear takes no other option');
          const result = await store(command, (useCase) =>
            useCase(ClearStage).execute({ actor: consoleActor(), group: name }),
          );
          outputFor(io, command).result(result, (r) =>
            r.removed ? say`Group ${r.group} has no recipe any more.` : say`Group ${r.group} had no recipe.`,
          );
          return;
        }
        if (!changes) {
          const view = await store(command, (useCase) => useCase(GetStage).execute({ group: name }));
          outputFor(io, command).result(view ?? null, () => showView(view, name));
          return;
        }
        if (options.recipe === undefined && options.stage === undefined)
          throw new UsageError('--started needs --stage (or --recipe)');
        const recipe = options.recipe === undefined ? undefined : await readRecipe(options.recipe);
        const result = await store(command, (useCase) =>
          useCase(AssignStage).execute({
            actor: consoleActor(),
            group: name,
            ...(recipe === undefined ? {} : { recipe }),
            ...(options.stage === undefined ? {} : { stage: options.stage }),
            ...(options.started === undefined ? {} : { started: options.started }),
          }),
        );
        outputFor(io, command).result(result, showStarted);
      }),
    'hortus group stage greenhouse-1 --recipe docs/recipes/lettuce.yaml --stage seedling',
    'hortus group stage greenhouse-1 --recipe docs/recipes/tomato.yaml --stage vegetative --started 2026-03-01',
    'hortus group stage greenhouse-1 --stage flowering',
    'hortus group stage greenhouse-1',
  );
}
