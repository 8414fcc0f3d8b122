import { type ChartDataField, type HistoryChart } from '@hortus/core';
import { type JsonSchema, looseNumber, object, text } from './schemas.js';
import { json, type ResponseDoc, type RouteSpec, type RouterSpec, withUnderscoreId } from './routing.js';

// Ids are not validated here: a malformed or unknown id is "not found" (COMPAT), which the core decides.
const userParams = object({ userId: { type: 'string', description: 'User id' } }, ['userId']);
const chartParams = object(
  {
    userId: { type: 'string', description: 'User id' },
    chartName: { type: 'string', description: 'Chart name' },
  },
  ['userId', 'chartName'],
);

const record: ResponseDoc = {
  description: "The user's HistoryChart record",
  schema: { $ref: '#/components/schemas/HistoryChart' },
};
const notFound: ResponseDoc = { description: "`{error: 'No history chart found.'}`" };
const invalid: ResponseDoc = { description: '`{error}` naming the invalid field' };
const failed = (text: string): ResponseDoc => ({ description: `\`{error: '${text}'}\`` });

const present = (chart: HistoryChart): unknown => withUnderscoreId(chart);

function changeFieldRoute(field: ChartDataField, schema: JsonSchema, serverError: string): RouteSpec {
  return {
    method: 'put',
    path: `/change_${field}/:userId/:chartName`,
    access: 'user',
    writes: true,
    summary: `Set chartData.${field} of the user's chart with that name`,
    params: chartParams,
    body: object({ [field]: schema }, [field]),
    style: { serverError },
    responses: { 200: record, 400: invalid, 404: notFound, 500: failed(serverError) },
    handle: async ({ params, body }, { changeChart }) =>
      json(
        present(
          await changeChart.setField({
            userId: params['userId'],
            chartName: params['chartName'],
            field,
            value: body[field],
          }),
        ),
      ),
  };
}

const getError = 'An error occurred while getting charts.';
const addError = 'An error occurred while adding a new chart.';
const datasetsError = 'An error occurred while updating charts.';
const deleteError = 'An error occurred while deleting the chart.';

export const historyChartRoutes: RouterSpec = {
  prefix: '/api/historyChart',
  tag: 'History charts',
  style: { body: 'error', serverError: getError },
  routes: [
    {
      method: 'get',
      path: '/all/:userId',
      access: 'user',
      writes: false,
      summary: "The user's whole HistoryChart record",
      params: userParams,
      responses: { 200: record, 404: notFound, 500: failed(getError) },
      handle: async ({ params }, { getHistoryCharts }) =>
        json(present(await getHistoryCharts.execute({ userId: params['userId'] }))),
    },
    {
      method: 'get',
      path: '/settings/:userId/:chartName',
      access: 'user',
      writes: false,
      summary: 'The chartData of the chart with that name',
      description: 'A missing record or chart is a 404 (the old service answered 500).',
      params: chartParams,
      responses: {
        200: { description: 'chartData', schema: { type: 'object' } },
        404: notFound,
        500: failed(getError),
      },
      handle: async ({ params }, { getChartSettings }) =>
        json(await getChartSettings.execute({ userId: params['userId'], chartName: params['chartName'] })),
    },
    {
      method: 'post',
      path: '/update/:userId',
      access: 'user',
      writes: true,
      summary: 'Append a chart (creates the record when the user has none)',
      description:
        'Defaults: chartId `defaultId`, chartName `Default Name`, chartData `{}`; update_interval is forced to 15000.',
      params: userParams,
      body: object({
        chartId: text('Chart id', 200),
        chartName: text('Chart name', 200),
        chartData: { type: 'object', description: 'type, max_count, data_interval, labels, datasets, ...' },
      }),
      style: { serverError: addError },
      responses: {
        200: record,
        400: invalid,
        409: { description: '`{error}`: the user has the maximum number of charts' },
        500: failed(addError),
      },
      handle: async ({ params, body }, { addChart }) =>
        json(
          present(
            await addChart.execute({
              userId: params['userId'],
              chartId: body['chartId'],
              chartName: body['chartName'],
              chartData: body['chartData'],
            }),
          ),
        ),
    },
    {
      method: 'put',
      path: '/change_datasets/:userId/:chartName/:dataTyp',
      access: 'user',
      writes: true,
      summary: 'Set chartData.datasets[0].checked_<dataTyp>',
      params: object(
        {
          userId: { type: 'string' },
          chartName: { type: 'string' },
          dataTyp: { type: 'string', description: 'Data type, e.g. temperature or moisture_1' },
        },
        ['userId', 'chartName', 'dataTyp'],
      ),
      body: object({ checked: { type: 'boolean' } }, ['checked']),
      style: { serverError: datasetsError },
      responses: { 200: record, 400: invalid, 404: notFound, 500: failed(datasetsError) },
      handle: async ({ params, body }, { changeChart }) =>
        json(
          present(
            await changeChart.setDatasetFlag({
              userId: params['userId'],
              chartName: params['chartName'],
              dataTyp: params['dataTyp'],
              checked: body['checked'],
            }),
          ),
        ),
    },
    changeFieldRoute(
      'type',
      text('Chart type: line or scatter', 32),
      'An error occurred while updating chart type.',
    ),
    changeFieldRoute(
      'data_interval',
      looseNumber('Milliseconds'),
      'An error occurred while updating data interval.',
    ),
    changeFieldRoute(
      'update_interval',
      looseNumber('Milliseconds'),
      'An error occurred while updating update interval.',
    ),
    changeFieldRoute(
      'max_count',
      looseNumber('Number of points'),
      'An error occurred while updating max count.',
    ),
    {
      method: 'delete',
      path: '/delete/:userId/:chartName',
      access: 'user',
      writes: true,
      summary: 'Remove every chart with that name',
      params: chartParams,
      style: { serverError: deleteError },
      responses: {
        200: record,
        404: {
          description:
            "`{error: 'No chart found with this ID.'}` without a record, `{error: 'No history chart found.'}` without such a chart",
        },
        500: failed(deleteError),
      },
      handle: async ({ params }, { deleteChart }) =>
        json(
          present(await deleteChart.execute({ userId: params['userId'], chartName: params['chartName'] })),
        ),
    },
  ],
};
