import type { ActionDef } from '../rule-definitions';

/**
 * A rule's tree of actions as a flat program a run steps through with one number (rule_runs.next_action), so a run
 * stopped anywhere (a wait, a retry, a crash) resumes at exactly the step it was at. An `if` is an instruction that
 * goes on to the next one (its `then`) or jumps to its `else`; the end of a `then` jumps past the `else`. A run
 * keeps the actions it started with, and the same tree always compiles to the same program, so the number stays
 * meaningful across restarts and versions. Rules without if steps compile to their actions in order (the numbers
 * runs of older versions recorded).
 */
export type Instruction =
  | { kind: 'step'; path: string; action: ActionDef; elseAt?: number }
  /** Not a step: where the end of a `then` goes on (past the `else`). */
  | { kind: 'jump'; to: number };

export function compile(actions: ActionDef[], path = 'actions', out: Instruction[] = []): Instruction[] {
  actions.forEach((action, i) => {
    const at = `${path}.${i}`;
    if (action.type !== 'if') {
      out.push({ kind: 'step', path: at, action });
      return;
    }
    const branch: Extract<Instruction, { kind: 'step' }> = { kind: 'step', path: at, action };
    out.push(branch);
    compile(action.then, `${at}.then`, out);
    const jump: Extract<Instruction, { kind: 'jump' }> | undefined = action.else.length ? { kind: 'jump', to: -1 } : undefined;
    if (jump) out.push(jump);
    branch.elseAt = out.length;
    compile(action.else, `${at}.else`, out);
    if (jump) jump.to = out.length;
  });
  return out;
}

/** The instruction a run goes on with after `pc`: jumps are followed (they are not steps and record nothing). */
export function resolve(program: Instruction[], pc: number): number {
  let at = pc;
  while (at < program.length) {
    const i = program[at];
    if (i.kind !== 'jump') break;
    at = i.to;
  }
  return at;
}
