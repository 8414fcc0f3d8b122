// What browser.mjs checks on every page, beside axe-core: the keyboard alone reaches and works the page's
// main control with a visible focus, and the page fits 375 px. Also the webhook receiver that counts an
// alert's reminders. Waits are for conditions, never fixed times.
/* global document, getComputedStyle, innerWidth */
import { createServer } from 'node:http';
import { setTimeout, clearTimeout } from 'node:timers';

/** Presses Tab until `target` has the focus (at most `limit` times); whether it got there. */
export async function tabTo(page, target, limit = 80) {
  const handle = await target.elementHandle();
  for (let presses = 0; presses < limit; presses += 1) {
    await page.keyboard.press('Tab');
    if (await handle.evaluate((element) => element === document.activeElement)) return true;
  }
  return false;
}

/** Whether the focused element shows it: `:focus-visible` matches and draws an outline. */
export async function focusShows(page) {
  return page.evaluate(() => {
    const element = document.activeElement;
    if (element === null || element === document.body) return false;
    const style = getComputedStyle(element);
    return element.matches(':focus-visible') && style.outlineStyle !== 'none' && style.outlineWidth !== '0px';
  });
}

/**
 * At 375 px: the document does not scroll sideways, and each control is shown whole inside the width
 * once scrolled to (not cut off inside a table that scrolls on its own). Returns what is wrong, or [].
 */
export async function narrowProblems(page, controls) {
  const problems = [];
  const width = await page.evaluate(() => document.scrollingElement.scrollWidth);
  if (width > 375) problems.push(`the page is ${width} px wide`);
  for (const [name, control] of controls) {
    await control.scrollIntoViewIfNeeded();
    const inside = await control.evaluate((element) => {
      const box = element.getBoundingClientRect();
      const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
      return (
        box.width > 0 &&
        box.left >= 0 &&
        box.right <= innerWidth &&
        hit !== null &&
        (hit === element || element.contains(hit))
      );
    });
    if (!inside) problems.push(`${name} is not shown whole`);
  }
  return problems;
}

/** A local webhook receiver: keeps every JSON body it is sent, and says when a condition holds. */
export async function webhookReceiver() {
  const received = [];
  const waiters = new Set();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      try {
        received.push(JSON.parse(body));
      } catch {
        received.push({ unreadable: body });
      }
      response.end();
      for (const waiter of waiters) waiter();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** Resolves when `condition()` holds, or rejects after `ms` with `what`. */
    until(condition, what, ms = 30_000) {
      if (condition()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}`));
        }, ms);
        const check = () => {
          if (!condition()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
