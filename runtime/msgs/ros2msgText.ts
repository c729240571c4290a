/**
 * Turns parsed message definitions back into ROS 2 `.msg` text and builds the `ros2msg`
 * "complete message definition" that `ros2 bag` writes into MCAP schemas
 * (rosbag2 docs/message_definition_encoding.md): the top-level text first, then for every
 * dependency a line of 80 `=`, a line `MSG: pkg/msg/Type`, and that type's text.
 */
import type { parse } from "@foxglove/rosmsg";

/** A parsed definition, as @foxglove/rosmsg returns it (its types package is not a direct dependency). */
export type MessageDefinition = ReturnType<typeof parse>[number];
/** One field of a parsed definition. */
export type MessageDefinitionField = MessageDefinition["definitions"][number];

/** The 80-character delimiter line of the `ros2msg` encoding. */
export const ROS2MSG_DELIMITER = "=".repeat(80);

/** "sensor_msgs/msg/JointState" or "sensor_msgs/JointState" → "sensor_msgs/JointState". */
export function shortTypeName(type: string): string {
  const parts = type.split("/");
  if (parts.length === 3 && parts[1] === "msg") return `${parts[0]}/${parts[2]}`;
  return type;
}

/** "sensor_msgs/JointState" → "sensor_msgs/msg/JointState" (the name ROS 2 and `ros2 bag` use). */
export function ros2TypeName(type: string): string {
  const short = shortTypeName(type);
  const parts = short.split("/");
  if (parts.length !== 2) return short;
  return `${parts[0]}/msg/${parts[1]}`;
}

/** The ROS 2 spelling of a field type: the parser maps builtin_interfaces/Time to "time". */
function fieldTypeText(field: MessageDefinitionField): string {
  let t = field.type;
  if (t === "time") t = "builtin_interfaces/Time";
  else if (t === "duration") t = "builtin_interfaces/Duration";
  if (t === "string" && field.upperBound !== undefined) t = `string<=${field.upperBound}`;
  if (!field.isArray) return t;
  if (field.arrayLength !== undefined) return `${t}[${field.arrayLength}]`;
  if (field.arrayUpperBound !== undefined) return `${t}[<=${field.arrayUpperBound}]`;
  return `${t}[]`;
}

/** `.msg` text of one definition (no comments: the parsed form has none). */
export function definitionToMsgText(def: MessageDefinition): string {
  const lines: string[] = [];
  for (const f of def.definitions) {
    if (f.isConstant) {
      lines.push(`${fieldTypeText(f)} ${f.name}=${f.valueText ?? String(f.value)}`);
    } else {
      lines.push(`${fieldTypeText(f)} ${f.name}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** Complex types a definition refers to directly, in field order ("time" counts as builtin_interfaces/Time). */
export function directDependencies(def: MessageDefinition): string[] {
  const out: string[] = [];
  for (const f of def.definitions) {
    if (f.isConstant) continue;
    let dep: string | undefined;
    if (f.type === "time") dep = "builtin_interfaces/Time";
    else if (f.type === "duration") dep = "builtin_interfaces/Duration";
    else if (f.isComplex) dep = shortTypeName(f.type);
    if (dep !== undefined && !out.includes(dep)) out.push(dep);
  }
  return out;
}

/**
 * Builds the complete definition the way rosbag2 does (rosbag2_cpp LocalMessageDefinitionSource):
 * the type's text, then for each dependency not yet written (sorted by name, depth first)
 * "\n", the delimiter line, `MSG: pkg/Type` as the field spells it, and that type's text.
 */
export function completeDefinition(
  root: string,
  textOf: (type: string) => string,
  depsOf: (type: string) => string[],
): string {
  const seen = new Set<string>([root]);
  const visit = (type: string): string => {
    let out = textOf(type);
    for (const dep of [...depsOf(type)].sort()) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      out += `\n${ROS2MSG_DELIMITER}\nMSG: ${dep}\n` + visit(dep);
    }
    return out;
  };
  return visit(root);
}
