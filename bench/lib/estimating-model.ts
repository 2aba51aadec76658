import {
  estimateRequestSpend,
  type Model,
  type ModelPrice,
  type ModelRequest,
  type ModelResponse,
  type RequestEstimate,
  type Usage,
} from '@cairn/engine';
import { firstUserInput } from '@cairn/engine/testing';

/** One model response, with the engine's estimate of the request that asked for it. */
export interface EstimatedResponse {
  /** The run's input (its first user message): names the run. */
  input: string;
  /** Messages before the response: its index in the run's history. */
  messageIndex: number;
  /** What the budget check counted for the request before it went out. */
  estimate: RequestEstimate;
  /** What the response reported. */
  usage: Usage | undefined;
}

/**
 * A model that answers through `inner` and records, for every response, the
 * engine's own estimate of its request (taken as the request goes out, the
 * prompt the budget check estimated a moment before) and the usage reported.
 */
export class EstimatingModel implements Model {
  /** Every response so far, in the order they came. */
  readonly responses: EstimatedResponse[] = [];

  constructor(
    private readonly inner: Model,
    private readonly price: ModelPrice | undefined,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    // The turn loop appends to `messages` after this turn: read it now.
    const input = firstUserInput(request.messages);
    const messageIndex = request.messages.length;
    const estimate = estimateRequestSpend(request, this.price);
    const response = await this.inner.respond(request);
    this.responses.push({ input, messageIndex, estimate, usage: response.usage });
    return response;
  }
}
