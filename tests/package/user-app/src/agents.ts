import { appendFileSync } from 'node:fs';
import { Agent, DELEGATE_TOOL_NAME, Team, tool, type ToolContext } from '@cairn/engine';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';
import { z } from 'zod';

const ORDER_LINES = ['blue mug', 'red kettle', 'green teapot'];

/** The app's own services, handed to every tool as `ctx.context` (built by `createContext()` in registry.ts). */
export interface SupportContext {
  warehouse: { stockOf(item: string): number };
}
const supportTool = tool<SupportContext>();

/** Tool executions this process has started, for `USER_APP_STALL_AFTER`. */
let started = 0;

/**
 * Slow enough to be interrupted; writes each execution to `USER_APP_LEDGER` so a test can count
 * them. With `USER_APP_STALL_AFTER=n`, the process's executions after its n-th wait until they are
 * aborted: a test that kills the process then finds the run still mid-way, however slow the machine.
 */
async function slowly<T>(ctx: ToolContext<SupportContext>, name: string, result: T): Promise<T> {
  started += 1;
  if (started > Number(process.env.USER_APP_STALL_AFTER ?? Infinity)) {
    await new Promise((_, reject) =>
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), {
        once: true,
      }),
    );
  }
  await new Promise((resolve) =>
    setTimeout(resolve, Number(process.env.USER_APP_TOOL_DELAY_MS ?? 500)),
  );
  ctx.signal.throwIfAborted();
  if (process.env.USER_APP_LEDGER)
    appendFileSync(process.env.USER_APP_LEDGER, `${name}\t${ctx.idempotencyKey}\n`);
  return result;
}

const listOrderLines = supportTool({
  name: 'list_order_lines',
  description: 'Lists the lines of an order.',
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }, ctx) =>
    slowly(ctx, 'list_order_lines', `${orderId}: ${ORDER_LINES.join(', ')}`),
});

const checkStock = supportTool({
  name: 'check_stock',
  description: 'Checks how many of one item are in stock.',
  parameters: z.object({ item: z.string() }),
  execute: ({ item }, ctx) =>
    slowly(ctx, 'check_stock', `${item}: ${ctx.context.warehouse.stockOf(item)} in stock`),
});

/** Lists the order, then checks each line's stock, one tool batch per line. */
export const clerk = new Agent({
  name: 'order-clerk',
  role: 'Looks orders up and checks stock.',
  tools: [listOrderLines, checkStock],
  model: new ScriptedModel({
    decide: ({ messages }) => {
      const lists = toolResults(messages, 'list_order_lines');
      if (lists.length === 0)
        return { toolCalls: [{ name: 'list_order_lines', arguments: { orderId: 'order-42' } }] };
      const checked = toolResults(messages, 'check_stock');
      const next = ORDER_LINES[checked.length];
      if (next) return { toolCalls: [{ name: 'check_stock', arguments: { item: next } }] };
      return { text: `Order report: ${checked.map((c) => c.content).join('; ')}` };
    },
  }),
});

/** Hands the question to the clerk, then answers with its report. */
export const supportTeam = new Team({
  name: 'support-team',
  members: [clerk],
  checkpoint: 'tool-batch',
  model: new ScriptedModel({
    decide: ({ messages }) => {
      const reports = toolResults(messages, DELEGATE_TOOL_NAME);
      if (reports.length === 0) {
        return {
          toolCalls: [
            {
              name: DELEGATE_TOOL_NAME,
              arguments: { member: 'order-clerk', task: firstUserInput(messages) },
            },
          ],
        };
      }
      return { text: `Support answer: ${reports[0]!.content}` };
    },
  }),
});
