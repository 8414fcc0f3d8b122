import { emailBody, object } from '../schemas.js';
import { json, type RouterSpec } from '../routing.js';

export const userRoutes: RouterSpec = {
  prefix: '/api/changeEmail',
  tag: 'Users',
  style: { body: 'text', serverError: 'An error occurred while changing the e-mail.' },
  routes: [
    {
      method: 'post',
      path: '/:userId',
      summary: "Change a user's e-mail address",
      params: object({ userId: { type: 'string', description: 'User id' } }, ['userId']),
      body: emailBody,
      responses: {
        200: { description: "`{message: 'Email changed successfully'}`" },
        400: { description: 'Plain-text validation message', text: true },
        404: { description: '`User not found.`', text: true },
        409: { description: 'Plain text: another user has that e-mail', text: true },
        500: { description: 'Plain-text error message', text: true },
      },
      handle: async ({ params, body }, { changeUserEmail }) => {
        await changeUserEmail.execute({ userId: params['userId'], newEmail: body['newEmail'] });
        return json({ message: 'Email changed successfully' });
      },
    },
  ],
};
