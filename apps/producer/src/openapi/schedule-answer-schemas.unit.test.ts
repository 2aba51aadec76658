import type { Schedule, ScheduleDetail } from '@cairn/client';
import { expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { scheduleDetailJson } from '../routes/schedule-routes.js';
import type { scheduleDetailSchema, scheduleSchema } from './schedule-answer-schemas.js';

// Checked by `npx tsc -p tsconfig.check.json`: the schedules' answer schemas are the client's wire types.
it("the schedules' answer schemas equal the client's wire types (checked at compile time)", () => {
  expectTypeOf<z.infer<typeof scheduleSchema>>().toEqualTypeOf<Schedule>();
  expectTypeOf<z.infer<typeof scheduleDetailSchema>>().toEqualTypeOf<ScheduleDetail>();
  // The firings the route answers are the client's.
  expectTypeOf<ReturnType<typeof scheduleDetailJson>['recent_firings']>().toEqualTypeOf<
    ScheduleDetail['recent_firings']
  >();
});
