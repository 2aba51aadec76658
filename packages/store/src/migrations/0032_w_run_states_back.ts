/**
 * Takes back 0031_w_run_states (issue #29, storage): its six lifecycle indexes
 * return to `runs` and `run_states` goes. With them on a table of their own,
 * the run list had to join the two to filter on one and order by the other,
 * and the planner, misjudging how many rows a join keeps, read a whole side
 * for 44 of the list's 1,088 filter and sort combinations (a search with a
 * lifecycle filter, a created range ordered by update), up to 301 ms against
 * 41.5 before (`npm run bench -- --only pages --quick`, docs/benchmarks.md).
 * The claim and the finish write every index of `runs` again. Its `up` is
 * 0031_w's `down` and its `down` 0031_w's `up`.
 */
export { down as up, up as down } from './0031_w_run_states.js';
