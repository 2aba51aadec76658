import type { RunMessagesPage } from '@cairn/store';
import { html } from 'hono/html';
import { messageBody } from './message-pager.js';
import type { Html } from './page-layout.js';

/** Most request messages a turn's detail shows (the latest of them). */
export const TURN_REQUEST_MESSAGES = 20;

/** Which messages a turn's detail reads: its request's new messages (at most {@link TURN_REQUEST_MESSAGES}) and its response. */
export function turnMessageRange(index: number, from: number): { offset: number; limit: number } {
  const offset = Math.max(0, Math.min(from, index), index - TURN_REQUEST_MESSAGES);
  return { offset, limit: index - offset + 1 };
}

/**
 * A model turn's request and response: the messages its request added to the
 * history since the previous turn (from `from`), and its response at `index`.
 * The run page's script shows the `.wf-turn-detail` element in its panel;
 * without script it is a page of its own.
 */
export function turnDetail(
  runId: string,
  index: number,
  from: number,
  page: RunMessagesPage,
): Html {
  const request = page.messages.filter((m) => m.index < index);
  const response = page.messages.find((m) => m.index === index);
  const skipped = request.length > 0 ? request[0]!.index - from : 0;
  return html`<section class="wf-turn-detail" data-run-id="${runId}" data-index="${index}">
    <h3>Model turn: message ${index} of <code>${runId}</code></h3>
    <p class="muted">
      The request sent the history's ${index} message${index === 1 ? '' : 's'}; the ones added since
      the previous turn: ${skipped > 0 ? html`(the first ${skipped} left out)` : ''}
    </p>
    <h4>Request</h4>
    ${
      request.length === 0
        ? html`<p class="empty">No new message.</p>`
        : html`<ol class="messages wf-request" start="${request[0]!.index}">
            ${request.map(
              ({ index: i, message }) =>
                html`<li class="message role-${message.role}" data-index="${i}">
                  <span class="role">${message.role}</span> ${messageBody(message)}
                </li>`,
            )}
          </ol>`
    }
    <h4>Response</h4>
    ${
      response
        ? html`<div class="message role-${response.message.role} wf-response">
            <span class="role">${response.message.role}</span> ${messageBody(response.message)}
          </div>`
        : html`<p class="empty wf-response">
            Not stored (yet): the turn is running, or its attempt ended before its next checkpoint.
          </p>`
    }
  </section>`;
}
