/** Logger that prefixes every line with level and node name, filtered by a minimum level. */
import type { Logger } from "../Runtime.ts";

/** Log levels, lowest first; "silent" drops everything. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Where lines go (default: stderr for warn/error, stdout otherwise). */
export type LogSink = (level: Exclude<LogLevel, "silent">, line: string) => void;

const defaultSink: LogSink = (level, line) => {
  if (level === "warn" || level === "error") console.error(line);
  else console.log(line);
};

/** A node's logger. */
export class ConsoleLogger implements Logger {
  constructor(
    readonly name: string,
    readonly level: LogLevel = "info",
    readonly sink: LogSink = defaultSink,
  ) {}

  #log(level: Exclude<LogLevel, "silent">, msg: string): void {
    if (RANK[level] < RANK[this.level]) return;
    this.sink(level, `[${level.toUpperCase()}] [${this.name}] ${msg}`);
  }

  debug(msg: string): void {
    this.#log("debug", msg);
  }
  info(msg: string): void {
    this.#log("info", msg);
  }
  warn(msg: string): void {
    this.#log("warn", msg);
  }
  error(msg: string): void {
    this.#log("error", msg);
  }
}
