import { emailBody, object } from './schemas.js';
import { json, type RouterSpec } from './routing.js';

export const userRoutes: RouterSpec = {
  prefix: '/api/changeEmail',
  tag: 'Users',
  style: { body: 'text', serverError: 'An error occurred while changing the e-mail.' },
  routes: [
    {
      method: 'post',
      path: '/:userId',
      access: 'user',
      writes: true,
      summary: "Change a user's e-mail address",
      params: object({ userId: { type: 'string', description: 'User id' } }, ['userId']),
      body: emailBody,
      responses: {
        200: { description: "`{message: 'Email changed successfully'}`" },
        400: { description: 'Plain-text validation message', text: true },
        404: { description: '`User not found.`', text: true },
        401: { description: 'Plain text: the user has a password, and no log-in token was sent', text: true },
        403: { description: "Plain text: another user's token, or a key that is no admin key", text: true },
        409: { description: 'Plain text: another user has that e-mail', text: true },
        500: { description: 'Plain-text error message', text: true },
      },
      description:
        "Once the user has a password, only the user's own log-in token or an admin key may change the e-mail " +
        '(the reset link goes to it); a user without a password changes without a credential, as in the original service.',
      handle: async ({ params, body, caller }, { changeUserEmail }) => {
        await changeUserEmail.execute({ userId: params['userId'], newEmail: body['newEmail'] }, caller);
        return json({ message: 'Email changed successfully' });
      },
    },
  ],
};
