/**
 * URScript as far as a simulated controller needs it (Universal Robots "The URScript Programming Language",
 * e-Series manual, §1 "The URScript Programming Language" / §"Scripting" and the client interfaces'
 * §"Sending URScript"):
 *
 * - A client sends a program to the primary (30001), secondary (30002) or real-time (30003) interface as text.
 *   A program is one top-level `def name():` … `end` (or `sec name():` … `end`, a secondary program that runs
 *   beside the primary one and must not move the arm). The controller compiles and starts it as soon as the
 *   block is complete; a new primary program replaces (stops) the running one.
 * - A top-level statement outside any `def` is compiled on its own, as a program of that one statement — so a
 *   script that ends `end` + `myprog()` sends two programs, and the second (calling a function it does not
 *   define) fails to compile and replaces the first.
 * - Blocks open with `def`, `sec`, `thread`, `if`, `while`, `for` (line ends with `:`) and close with `end`;
 *   `elif` / `else` continue a block.
 *
 * `assemble` splits a byte stream into programs; `compile` checks that every called name is a built-in or
 * defined in the program; `ProgramRun` steps the statements the simulator models (textmsg, sleep, sync,
 * movej, stopj, halt, write_output_*_register, while True loops); other built-ins run as no-ops.
 */

/** One program as received. */
export interface UrProgram {
  name: string;
  kind: "def" | "sec" | "bare";
  /** Source lines (comments removed). */
  lines: string[];
}

/** A statement the simulator understands. */
export type Stmt = { kind: "call"; name: string; args: string[]; line: number } | { kind: "loop"; body: Stmt[] } | { kind: "block" };

const OPENERS = new Set(["def", "sec", "thread", "if", "while", "for"]);

/**
 * URScript built-in functions (URScript manual §"Module motion" … §"Module interfaces", the ones clients send
 * most); a call to anything else that the program does not define is a compile error.
 */
export const URSCRIPT_BUILTINS = new Set([
  "movej", "movel", "movep", "movec", "servoj", "servoc", "speedj", "speedl", "stopj", "stopl", "sleep", "sync", "halt", "textmsg", "popup",
  "set_tcp", "set_payload", "set_payload_mass", "set_payload_cog", "set_gravity", "set_tool_voltage", "force_mode", "end_force_mode", "zero_ftsensor",
  "teach_mode", "end_teach_mode", "freedrive_mode", "end_freedrive_mode", "protective_stop", "get_actual_joint_positions", "get_actual_tcp_pose",
  "get_target_joint_positions", "get_target_tcp_pose", "get_inverse_kin", "get_forward_kin", "pose_trans", "pose_inv", "pose_add", "pose_sub", "p",
  "read_input_integer_register", "read_input_float_register", "read_input_boolean_register", "write_output_integer_register",
  "write_output_float_register", "write_output_boolean_register", "rtde_set_watchdog", "set_standard_digital_out", "set_configurable_digital_out",
  "set_tool_digital_out", "set_standard_analog_out", "get_standard_digital_in", "get_standard_digital_out", "get_tool_digital_in",
  "socket_open", "socket_close", "socket_send_string", "socket_send_line", "socket_read_ascii_float", "socket_read_binary_integer",
  "socket_read_string", "socket_get_var", "socket_set_var", "to_str", "to_num", "norm", "sqrt", "sin", "cos", "tan", "atan2", "floor", "ceil",
  "fabs", "pow", "d2r", "r2d", "get_steptime", "is_steady", "str_len", "str_cat", "run", "kill", "enter_critical", "exit_critical",
  "interpolate_pose", "point_dist", "pose_dist", "get_controller_temp", "get_joint_temp", "get_joint_torques", "get_tcp_force", "length",
  "binary_list_to_integer", "integer_to_binary_list", "random", "set_speed_slider_fraction", "get_speed_scaling", "stop_conveyor_tracking",
]);

const stripComment = (line: string) => {
  let inStr = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"') inStr = !inStr;
    else if (line[i] === "#" && !inStr) return line.slice(0, i);
  }
  return line;
};

/** Splits the text received so far into complete programs; returns them and the incomplete rest. */
export function assemble(text: string): { programs: UrProgram[]; rest: string } {
  const programs: UrProgram[] = [];
  const all = text.split("\n");
  const complete = all.slice(0, -1);
  let block: string[] = [];
  let depth = 0;
  let consumed = 0;
  complete.forEach((raw, i) => {
    const line = stripComment(raw).replace(/\r$/, "").trim();
    if (depth === 0) {
      if (!line) {
        consumed = i + 1;
        return;
      }
      const m = /^(def|sec)\s+(\w+)\s*\(.*\)\s*:$/.exec(line);
      if (m) {
        block = [line];
        depth = 1;
        return;
      }
      programs.push({ name: line.replace(/\W+/g, "_").slice(0, 40) || "program", kind: "bare", lines: [line] });
      consumed = i + 1;
      return;
    }
    block.push(line);
    const word = /^(\w+)/.exec(line)?.[1] ?? "";
    if (OPENERS.has(word) && line.endsWith(":")) depth++;
    else if (line === "end") depth--;
    if (depth === 0) {
      const m = /^(def|sec)\s+(\w+)/.exec(block[0])!;
      programs.push({ name: m[2], kind: m[1] as "def" | "sec", lines: block });
      block = [];
      consumed = i + 1;
    }
  });
  return { programs, rest: all.slice(consumed).join("\n") };
}

/** Splits "a, [1, 2], f(x, y)" at top-level commas. */
export function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  let inStr = false;
  for (const ch of s) {
    if (ch === '"') inStr = !inStr;
    if (!inStr && (ch === "(" || ch === "[")) depth++;
    if (!inStr && (ch === ")" || ch === "]")) depth--;
    if (ch === "," && depth === 0 && !inStr) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Names called in a line (`name(` not preceded by `def`, `.` or a letter). */
function calledNames(line: string): string[] {
  const noStr = line.replace(/"[^"]*"/g, '""');
  if (/^(def|sec|thread)\s/.test(noStr)) return [];
  return [...noStr.matchAll(/(?<![\w.])([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]).filter((n) => !["if", "while", "for", "elif", "not", "and", "or", "return"].includes(n));
}

/** Compiles a program: its statement tree, or the first compile error (line is 1-based within the program). */
export function compile(p: UrProgram): { body: Stmt[] } | { error: string; line: number } {
  const defined = new Set(p.lines.map((l) => /^(?:def|thread)\s+(\w+)/.exec(l)?.[1]).filter((n): n is string => !!n));
  for (let i = 0; i < p.lines.length; i++) {
    for (const n of calledNames(p.lines[i])) {
      if (!URSCRIPT_BUILTINS.has(n) && !defined.has(n)) return { error: `compile_error_name_not_found: ${n} is not defined in program ${p.name}`, line: i + 1 };
    }
  }
  const lines = p.kind === "bare" ? p.lines : p.lines.slice(1, -1);
  const [body] = parseBlock(lines, 0, p.kind === "bare" ? 1 : 2);
  return { body };
}

function parseBlock(lines: string[], from: number, lineNo: number): [Stmt[], number] {
  const out: Stmt[] = [];
  let i = from;
  while (i < lines.length) {
    const line = lines[i];
    if (!line) {
      i++;
      continue;
    }
    if (line === "end" || /^(elif|else)\b/.test(line)) return [out, i];
    const word = /^(\w+)/.exec(line)?.[1] ?? "";
    if (OPENERS.has(word) && line.endsWith(":")) {
      const [inner, j] = parseBlock(lines, i + 1, lineNo + i + 1);
      // Skip elif/else branches up to the block's own `end`.
      let k = j;
      while (k < lines.length && lines[k] !== "end") k = parseBlock(lines, k + 1, lineNo + k + 1)[1];
      if (/^while\s+(True|true)\s*:$/.test(line)) out.push({ kind: "loop", body: inner });
      else out.push({ kind: "block" });
      i = k + 1;
      continue;
    }
    const m = /^([A-Za-z_]\w*)\s*\((.*)\)$/.exec(line);
    if (m) out.push({ kind: "call", name: m[1], args: splitArgs(m[2]), line: lineNo + i });
    else if (line === "halt") out.push({ kind: "call", name: "halt", args: [], line: lineNo + i });
    i++;
  }
  return [out, i];
}

/** What a running program may do to the controller. */
export interface ProgramEnv {
  text(message: string): void;
  /** Moves one controller cycle towards q at speed v (rad/s); true once there. */
  moveToward(q: number[], v: number): boolean;
  setOutput(name: string, value: number | boolean): void;
}

/** Numeric value of an argument ("1.5", "a=1.5", "d2r(90)" is not evaluated: NaN). */
export function num(arg: string | undefined, fallback: number): number {
  if (arg === undefined) return fallback;
  const v = Number(arg.replace(/^\w+\s*=\s*/, ""));
  return Number.isFinite(v) ? v : fallback;
}

/** A list argument "[1, 2, 3]" as numbers, or null. */
export function list(arg: string | undefined): number[] | null {
  const m = /^\[(.*)\]$/.exec((arg ?? "").trim());
  if (!m) return null;
  const v = splitArgs(m[1]).map(Number);
  return v.every(Number.isFinite) ? v : null;
}

/** One program's execution, a statement at a time, one controller cycle per `step`. */
export class ProgramRun {
  #stack: { stmts: Stmt[]; i: number; loop: boolean }[];
  #sleepLeft = 0;
  done = false;

  constructor(body: Stmt[]) {
    this.#stack = [{ stmts: body, i: 0, loop: false }];
  }

  /** Runs one controller cycle of `dt` seconds. */
  step(dt: number, env: ProgramEnv): void {
    if (this.done) return;
    if (this.#sleepLeft > 0) {
      this.#sleepLeft -= dt;
      return;
    }
    // A loop without a time-consuming statement would spin: the controller gives it one cycle per pass.
    for (let budget = 0; budget < 1000; budget++) {
      const top = this.#stack[this.#stack.length - 1];
      if (!top) {
        this.done = true;
        return;
      }
      if (top.i >= top.stmts.length) {
        if (top.loop) {
          top.i = 0;
          return;
        }
        this.#stack.pop();
        continue;
      }
      const s = top.stmts[top.i];
      if (s.kind === "loop") {
        top.i++;
        this.#stack.push({ stmts: s.body, i: 0, loop: true });
        continue;
      }
      if (s.kind === "block") {
        top.i++;
        continue;
      }
      if (!this.#exec(s, dt, env)) return;
      top.i++;
      if (s.name === "sleep" || s.name === "sync") return;
    }
  }

  /** Executes a call; false while it still takes time (movej on its way). */
  #exec(s: Extract<Stmt, { kind: "call" }>, dt: number, env: ProgramEnv): boolean {
    switch (s.name) {
      case "textmsg":
        env.text(s.args.map((a) => a.replace(/^"(.*)"$/, "$1")).join(""));
        return true;
      case "sleep":
        this.#sleepLeft = num(s.args[0], 0) - dt;
        return true;
      case "movej": {
        const q = list(s.args[0]);
        if (!q || q.length !== 6) return true;
        const v = num(s.args.find((a) => /^v\s*=/.test(a)) ?? s.args[2], 1.05);
        return env.moveToward(q, v);
      }
      case "halt":
      case "stopj":
      case "stopl":
        if (s.name === "halt") this.done = true;
        return true;
      case "write_output_integer_register":
        env.setOutput(`output_int_register_${num(s.args[0], 0)}`, num(s.args[1], 0));
        return true;
      case "write_output_float_register":
        env.setOutput(`output_double_register_${num(s.args[0], 0)}`, num(s.args[1], 0));
        return true;
      case "write_output_boolean_register":
        env.setOutput(`output_bit_register_${num(s.args[0], 0)}`, /^(True|true)$/.test(s.args[1] ?? ""));
        return true;
      default:
        return true;
    }
  }
}
