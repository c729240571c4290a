/**
 * Reads our ROS 2 launch files (launch/ros2/*.launch.xml) far enough to check them and to run their nodes
 * without ROS 2: `<arg name default>` declarations, `$(var name)` substitution, and `<executable cmd name>`
 * entries whose command is `rlft node <executable> ...`. ros2 launch itself reads the same files on a robot. The XML
 * goes through a real parser (@xmldom/xmldom), so comments, quoting and entities mean what they mean to ros2 launch.
 */
import { readFileSync } from "node:fs";
import { DOMParser, onErrorStopParsing, type Element } from "@xmldom/xmldom";
import { parse as parseYaml } from "yaml";
import { checkParams, parseParamArgs } from "./nodeExecutables.ts";

/** One `rlft node` process of a launch file. */
export interface LaunchedNode {
  /** The `name` attribute (ROS 2 process name). */
  name: string;
  executable: string;
  runtime: string;
  params: Record<string, unknown>;
}

function attrs(el: Element): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < el.attributes.length; i++) out[el.attributes[i].name] = el.attributes[i].value;
  return out;
}

/** Parses a YAML scalar/flow value as `--param` does. */
export function paramValue(s: string): unknown {
  try {
    return parseYaml(s);
  } catch {
    return s;
  }
}

/** Reads a launch file, substituting `overrides` then the args' defaults. */
export function readRos2Launch(path: string, overrides: Record<string, string> = {}): LaunchedNode[] {
  let root: Element | null;
  try {
    root = new DOMParser({ onError: onErrorStopParsing }).parseFromString(readFileSync(path, "utf8"), "text/xml").documentElement;
  } catch (e) {
    throw new Error(`${path}: not well-formed XML: ${(e as Error).message}`);
  }
  if (root?.tagName !== "launch") throw new Error(`${path}: not a ROS 2 launch file (no <launch> element)`);
  const vars: Record<string, string> = {};
  const sub = (s: string) =>
    s.replace(/\$\(var ([\w-]+)\)/g, (_, k: string) => {
      if (!(k in vars)) throw new Error(`${path}: $(var ${k}) is not declared with <arg name="${k}"> before its use`);
      return vars[k];
    });
  // Args are declared in order; a default may use earlier args, as in ros2 launch.
  for (const el of Array.from(root.getElementsByTagName("arg"))) {
    const a = attrs(el);
    if (!a.name) throw new Error(`${path}: <arg> without a name`);
    vars[a.name] = overrides[a.name] ?? sub(a.default ?? "");
  }
  const nodes: LaunchedNode[] = [];
  for (const el of Array.from(root.getElementsByTagName("executable"))) {
    const a = attrs(el);
    if (a.if !== undefined && sub(a.if) !== "true") continue;
    if (a.unless !== undefined && sub(a.unless) === "true") continue;
    const argv = sub(a.cmd ?? "").trim().split(/\s+/);
    const at = argv.indexOf("node");
    if (at < 0 || !argv[at + 1]) throw new Error(`${path}: <executable name="${a.name}"> does not run \`rlft node <executable>\` (cmd="${a.cmd}")`);
    const executable = argv[at + 1];
    const rest = argv.slice(at + 2);
    const paramArgs: string[] = [];
    let runtime = "ros2";
    for (let i = 0; i < rest.length; i++) {
      if (rest[i] === "--param") paramArgs.push(rest[++i]);
      else if (rest[i] === "--runtime") runtime = rest[++i];
      else throw new Error(`${path}: <executable name="${a.name}">: unexpected argument "${rest[i]}" (use --param key=value)`);
    }
    const params = checkParams(executable, parseParamArgs(paramArgs, paramValue));
    nodes.push({ name: sub(a.name ?? executable), executable, runtime, params });
  }
  if (nodes.length === 0) throw new Error(`${path}: no <executable> entries`);
  return nodes;
}
