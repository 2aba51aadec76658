import type { Message } from '@cairn/engine';
import type { RunMessagesPage } from '@cairn/store';
import { html } from 'hono/html';
import { foldedText, type Html } from './page-layout.js';

/** Messages per page of a run page. */
export const MESSAGES_PER_PAGE = 100;

/** The page of messages to show: `requested` (1-based), or the last one when absent; clamped to the pages there are. */
export function messagePageNumber(total: number, requested: number | undefined): number {
  const pages = Math.max(1, Math.ceil(total / MESSAGES_PER_PAGE));
  return Math.min(pages, Math.max(1, requested ?? pages));
}

/** One page of the run's history with links to the first, previous, next and last pages. */
export function messagePager(runId: string, page: RunMessagesPage, pageNumber: number): Html {
  const pages = Math.max(1, Math.ceil(page.total / MESSAGES_PER_PAGE));
  const link = (n: number, label: string, rel: string) =>
    html`<a
      href="/ui/runs/${encodeURIComponent(runId)}?page=${n}#messages"
      data-page="${n}"
      rel="${rel}"
      >${label}</a
    >`;
  const nav = html`<nav class="pager" data-pages="${pages}" data-page="${pageNumber}">
    ${pageNumber > 1 ? html`${link(1, '⇤ First', 'first')} ${link(pageNumber - 1, '← Earlier', 'prev')}` : ''}
    <span
      >messages ${page.messages[0]?.index ?? 0}–${page.messages.at(-1)?.index ?? 0} of ${page.total}
      · page ${pageNumber} of ${pages}</span
    >
    ${pageNumber < pages ? html`${link(pageNumber + 1, 'Later →', 'next')} ${link(pages, 'Last ⇥', 'last')}` : ''}
  </nav>`;
  if (page.total === 0) return html`<p class="empty">No message yet.</p>`;
  return html`${nav}
    <ol class="messages" start="${page.messages[0]?.index ?? 0}">
      ${page.messages.map(
        ({ index, message }) =>
          html`<li class="message role-${message.role}" data-index="${index}">
            <span class="role">${message.role}</span> ${messageBody(message)}
          </li>`,
      )}
    </ol>
    ${nav}`;
}

/** One message's body: its text (folded when long), an assistant's tool calls, a tool result's tool name. */
export function messageBody(message: Message): Html {
  switch (message.role) {
    case 'user':
      return foldedText(message.content, 400);
    case 'assistant':
      return html`${message.content ? foldedText(message.content, 400) : ''}
      ${(message.toolCalls ?? []).map(
        (call) =>
          html`<div class="call">
            → <strong>${call.name}</strong> <code>${call.arguments}</code>
          </div>`,
      )}`;
    case 'tool':
      return html`<span class="muted">${message.name}${message.isError ? ' (error)' : ''}</span>
        ${foldedText(message.content, 400)}`;
  }
}
