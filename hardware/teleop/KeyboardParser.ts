/**
 * Terminal raw-mode byte stream → key names. In raw mode (`stdin.setRawMode(true)`) a terminal sends
 * printable keys as their bytes, control keys as C0 bytes, and cursor/editing keys as escape sequences:
 * CSI `ESC [ params final` and SS3 `ESC O final` (ECMA-48 §5.4; xterm "ctlseqs", PC-Style Function Keys).
 * A sequence may arrive split across reads, so the parser keeps the unfinished tail.
 */

/** Final bytes of cursor keys (CSI or SS3, xterm normal and application cursor mode). */
const CURSOR: Record<string, string> = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end" };
/** `CSI n ~` editing keys (xterm ctlseqs, "PC-Style Function Keys"). */
const TILDE: Record<string, string> = { "1": "home", "2": "insert", "3": "delete", "4": "end", "5": "pageup", "6": "pagedown" };
/** C0 control bytes with names. */
const C0: Record<number, string> = { 0x03: "ctrl-c", 0x04: "ctrl-d", 0x09: "tab", 0x0d: "enter", 0x0a: "enter", 0x7f: "backspace", 0x08: "backspace", 0x20: "space" };

/** Incremental parser: feed chunks, get key names ("a", "up", "space", "ctrl-c", "escape", ...). */
export class KeyboardParser {
  #pending: number[] = [];

  /** Parses one chunk; returns the keys completed by it. */
  feed(chunk: Uint8Array): string[] {
    const keys: string[] = [];
    const b = [...this.#pending, ...chunk];
    this.#pending = [];
    let i = 0;
    while (i < b.length) {
      const c = b[i];
      if (c === 0x1b) {
        if (i + 1 >= b.length) {
          this.#pending = b.slice(i); // maybe the start of a sequence: wait for more (flush() on a pause)
          break;
        }
        const n = b[i + 1];
        if (n === 0x5b || n === 0x4f) {
          // CSI / SS3: parameter bytes 0x30–0x3F, intermediate 0x20–0x2F, final 0x40–0x7E.
          let j = i + 2;
          while (j < b.length && b[j] >= 0x20 && b[j] <= 0x3f) j++;
          if (j >= b.length) {
            this.#pending = b.slice(i);
            break;
          }
          const params = String.fromCharCode(...b.slice(i + 2, j));
          const final = String.fromCharCode(b[j]);
          const key = final === "~" ? TILDE[params.split(";")[0]] : CURSOR[final];
          keys.push(key ?? `unknown:${final}`);
          i = j + 1;
          continue;
        }
        keys.push("escape");
        i += 1;
        continue;
      }
      if (C0[c]) keys.push(C0[c]);
      else if (c >= 0x21 && c < 0x7f) keys.push(String.fromCharCode(c).toLowerCase());
      else if (c < 0x20) keys.push(`ctrl-${String.fromCharCode(c + 0x60)}`);
      // bytes ≥ 0x80 (UTF-8 text) are not teleop keys: skipped.
      i += 1;
    }
    return keys;
  }

  /** Called after a quiet period: a lone pending ESC was the Escape key. */
  flush(): string[] {
    const had = this.#pending.length > 0;
    this.#pending = [];
    return had ? ["escape"] : [];
  }
}
