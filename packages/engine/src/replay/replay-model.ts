import type { AssistantMessage, Message } from '../messages.js';
import type { Model, ModelRequest, ModelResponse } from '../model.js';

/**
 * The model of a replay: it calls no provider; each turn answers with the
 * stored assistant message `answer` picks for the history the turn loop built.
 */
export class ReplayModel implements Model {
  readonly name = 'replay';

  constructor(private readonly answer: (messages: readonly Message[]) => AssistantMessage) {}

  respond(request: ModelRequest): Promise<ModelResponse> {
    return Promise.resolve({ message: structuredClone(this.answer(request.messages)) });
  }
}
