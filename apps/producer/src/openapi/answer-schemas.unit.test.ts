import type {
  CancelledRun,
  ContinuedRun,
  CreatedRun,
  DecisionsResult,
  ForkedRun,
  RunView,
  ErrorBody as ClientErrorBody,
} from '@cairn/client';
import type { RunView as StoreRunView, SessionView } from '@cairn/store';
import { expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ErrorBody } from '../http-errors.js';
import type {
  cancelledRunSchema,
  continuedRunSchema,
  createdRunSchema,
  decisionsResultSchema,
  forkedRunSchema,
  runViewSchema,
  sessionViewSchema,
} from './answer-schemas.js';

// Checked by `npx tsc -p tsconfig.check.json`: the document's answer schemas are the client's wire types, field for field.
it("the OpenAPI answer schemas equal the client's wire types (checked at compile time)", () => {
  expectTypeOf<z.infer<typeof runViewSchema>>().toEqualTypeOf<RunView>();
  expectTypeOf<z.infer<typeof createdRunSchema>>().toEqualTypeOf<CreatedRun>();
  expectTypeOf<z.infer<typeof continuedRunSchema>>().toEqualTypeOf<ContinuedRun>();
  expectTypeOf<z.infer<typeof forkedRunSchema>>().toEqualTypeOf<ForkedRun>();
  expectTypeOf<z.infer<typeof cancelledRunSchema>>().toEqualTypeOf<CancelledRun>();
  expectTypeOf<z.infer<typeof decisionsResultSchema>>().toEqualTypeOf<DecisionsResult>();
  // The client has no session type: the store's is the answer.
  expectTypeOf<z.infer<typeof sessionViewSchema>>().toEqualTypeOf<SessionView>();
  // What the route answers fits the schema the document shows.
  expectTypeOf<StoreRunView>().toExtend<z.infer<typeof runViewSchema>>();
  expectTypeOf<ErrorBody>().toExtend<ClientErrorBody>();
});
