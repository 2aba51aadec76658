import { Agent, DELEGATE_TOOL_NAME, Engine, Registry, Team, tool, UserError } from '@cairn/engine';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await t.close();
});

const answer = (text: string) => new ScriptedModel({ decide: () => ({ text }) });

describe('authoring API', () => {
  it('an entity that names no checkpoint mode is durable after every tool batch', async () => {
    const agent = new Agent({ name: 'plain', model: answer('hi') });
    const team = new Team({ name: 'plain-team', model: answer('hi'), members: [agent] });
    expect([agent.checkpoint, team.checkpoint]).toEqual(['tool-batch', 'tool-batch']);
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ teams: [team] }),
      workerId: 'w',
    });
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'plain' },
      input: 'hello',
    });
    expect(run.checkpoint).toBe('tool-batch');
  });

  it("offers a team's own tools beside delegation, and runs them", async () => {
    const seenTools: string[][] = [];
    const clerk = new Agent({ name: 'clerk', model: answer('order 42 ships Monday') });
    const lookupCustomer = tool({
      name: 'lookup_customer',
      description: 'Finds a customer by email',
      parameters: z.object({ email: z.string() }),
      execute: ({ email }) => `customer ${email}: Ada`,
    });
    const team = new Team({
      name: 'desk',
      members: [clerk],
      tools: [lookupCustomer],
      model: new ScriptedModel({
        decide: ({ messages, tools }) => {
          seenTools.push(tools.map((s) => s.name));
          if (toolResults(messages, 'lookup_customer').length === 0) {
            return {
              toolCalls: [{ name: 'lookup_customer', arguments: { email: 'ada@example.com' } }],
            };
          }
          const delegated = toolResults(messages, DELEGATE_TOOL_NAME);
          if (delegated.length === 0) {
            return {
              toolCalls: [
                {
                  name: DELEGATE_TOOL_NAME,
                  arguments: { member: 'clerk', task: firstUserInput(messages) },
                },
              ],
            };
          }
          return {
            text: `${toolResults(messages, 'lookup_customer')[0]!.content}; ${delegated[0]!.content}`,
          };
        },
      }),
    });
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ teams: [team] }),
      workerId: 'w',
    });
    const run = await engine.createRun({
      entity: { kind: 'team', name: 'desk' },
      input: 'When does my order ship?',
    });
    const result = await engine.execute(run.runId, { reason: 'run' });
    expect(result.outcome === 'finished' && result.run.content).toBe(
      'customer ada@example.com: Ada; order 42 ships Monday',
    );
    expect(seenTools[0]).toEqual([DELEGATE_TOOL_NAME, 'lookup_customer']);
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.tools.map((c) => c.name)).toEqual(['lookup_customer', DELEGATE_TOOL_NAME]);
  });

  it('engine.run executes an agent in process, durably on the store, with no registry', async () => {
    const weather = tool({
      name: 'weather',
      description: 'Current weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => `${city}: 21 C`,
    });
    const agent = new Agent({
      name: 'forecaster',
      tools: [weather],
      model: new ScriptedModel({
        decide: ({ messages }) =>
          toolResults(messages).length === 0
            ? { toolCalls: [{ name: 'weather', arguments: { city: 'Lyon' } }] }
            : { text: `It is ${toolResults(messages)[0]!.content}` },
      }),
    });
    const run = await new Engine({ store: t.store }).run(agent, 'Weather in Lyon?');
    expect(run).toMatchObject({
      status: 'COMPLETED',
      content: 'It is Lyon: 21 C',
      output: 'It is Lyon: 21 C',
      checkpoint: 'tool-batch',
    });
    const stored = (await t.store.getRunView(run.runId))!;
    expect(stored).toMatchObject({
      status: 'COMPLETED',
      entity: { kind: 'agent', name: 'forecaster' },
    });
    expect(stored.tools.map((c) => [c.name, c.result])).toEqual([['weather', 'Lyon: 21 C']]);
  });

  it('validates an outputType, sends the model a retry message when its answer does not match, and returns the typed output', async () => {
    const answers = [
      'The weather is nice.',
      '{"city":"Lyon"}',
      '```json\n{"city":"Lyon","temperatureC":21}\n```',
    ];
    const seen: { instructions: string; lastUserMessage: string }[] = [];
    const agent = new Agent({
      name: 'structured',
      outputType: z.object({ city: z.string(), temperatureC: z.number() }),
      model: new ScriptedModel({
        decide: ({ messages, instructions, turn }) => {
          const users = messages.filter((m) => m.role === 'user');
          seen.push({ instructions, lastUserMessage: users.at(-1)!.content });
          return { text: answers[turn]! };
        },
      }),
    });
    const run = await new Engine({ store: t.store }).run(agent, 'Weather in Lyon as JSON');
    const output: { city: string; temperatureC: number } | undefined = run.output;
    expect(output).toEqual({ city: 'Lyon', temperatureC: 21 });
    expect(run.content).toBe('{"city":"Lyon","temperatureC":21}');
    expect(seen[0]!.instructions).toContain('"temperatureC"');
    expect(seen[1]!.lastUserMessage).toMatch(
      /does not match the required output type: it is not JSON/,
    );
    expect(seen[2]!.lastUserMessage).toMatch(
      /does not match the required output type:[\s\S]*temperatureC/,
    );
  });

  it("hands tools the app's context, typed by tool<Ctx>(): the engine's, or a run's own, member runs included", async () => {
    interface Shop {
      priceOf(item: string): number;
    }
    const shopTool = tool<Shop>();
    const price = shopTool({
      name: 'price',
      description: 'Price of an item',
      parameters: z.object({ item: z.string() }),
      execute: ({ item }, ctx) => `${item}: ${ctx.context.priceOf(item)} EUR`,
    });
    const pricer = new Agent({
      name: 'pricer',
      tools: [price],
      model: new ScriptedModel({
        decide: ({ messages }) =>
          toolResults(messages).length === 0
            ? { toolCalls: [{ name: 'price', arguments: { item: 'mug' } }] }
            : { text: toolResults(messages)[0]!.content },
      }),
    });
    const desk = new Team({
      name: 'price-desk',
      members: [pricer],
      model: new ScriptedModel({
        decide: ({ messages }) =>
          toolResults(messages).length === 0
            ? {
                toolCalls: [
                  {
                    name: DELEGATE_TOOL_NAME,
                    arguments: { member: 'pricer', task: 'price the mug' },
                  },
                ],
              }
            : { text: toolResults(messages)[0]!.content },
      }),
    });
    const engine = new Engine({ store: t.store, context: { priceOf: () => 12 } satisfies Shop });
    expect((await engine.run(pricer, 'How much is the mug?')).content).toBe('mug: 12 EUR');
    const own = await engine.run(desk, 'How much is the mug?', {
      context: { priceOf: () => 9 } satisfies Shop,
    });
    expect(own.content).toBe('mug: 9 EUR');
  });

  it('runs a team as a member of another team: each delegation is a member run of its own, nested in the view', async () => {
    const delegateOnce = (member: string, prefix: string) =>
      new ScriptedModel({
        decide: ({ messages }) => {
          const reports = toolResults(messages, DELEGATE_TOOL_NAME);
          if (reports.length === 0) {
            return {
              toolCalls: [
                { name: DELEGATE_TOOL_NAME, arguments: { member, task: firstUserInput(messages) } },
              ],
            };
          }
          return { text: `${prefix}: ${reports[0]!.content}` };
        },
      });
    const clerk = new Agent({ name: 'clerk', model: answer('order 42 ships Monday') });
    const desk = new Team({
      name: 'desk',
      role: 'Answers order questions',
      members: [clerk],
      model: delegateOnce('clerk', 'desk'),
    });
    const company = new Team({
      name: 'company',
      members: [desk],
      model: delegateOnce('desk', 'company'),
    });
    const registry = new Registry({ teams: [company] });
    expect(registry.list()).toEqual(
      expect.arrayContaining([
        { kind: 'team', name: 'company' },
        { kind: 'team', name: 'company/desk' },
        { kind: 'agent', name: 'company/desk/clerk' },
        { kind: 'team', name: 'desk' },
        { kind: 'agent', name: 'clerk' },
      ]),
    );
    const run = await new Engine({ store: t.store, registry }).run(
      company,
      'When does order 42 ship?',
    );
    expect(run.content).toBe('company: desk: order 42 ships Monday');
    const view = (await t.store.getRunView(run.runId))!;
    const deskRun = view.member_runs[0]!;
    expect(deskRun.entity).toEqual({ kind: 'team', name: 'company/desk' });
    expect(deskRun.status).toBe('COMPLETED');
    expect(deskRun.member_runs.map((m) => [m.entity.name, m.status, m.content])).toEqual([
      ['company/desk/clerk', 'COMPLETED', 'order 42 ships Monday'],
    ]);
  });

  it('refuses a team tool that would shadow the delegation tool', () => {
    const shadow = tool({
      name: DELEGATE_TOOL_NAME,
      description: 'x',
      parameters: z.object({}),
      execute: () => 'x',
    });
    expect(
      () =>
        new Team({
          name: 't',
          model: answer('x'),
          members: [new Agent({ name: 'a', model: answer('x') })],
          tools: [shadow],
        }),
    ).toThrow(UserError);
  });
});
