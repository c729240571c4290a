/**
 * rosbag2 bag folders (`ros2 bag record` output: `metadata.yaml` next to its storage files) as rlft inputs. rlft reads
 * the MCAP storage (`--storage mcap`, the default since ROS 2 Iron) directly: the folder stands for its .mcap files.
 * The sqlite3 storage (`.db3`, the default up to Humble) rlft does not read; it is refused with the command that
 * converts it to MCAP.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

/** The fix for a sqlite3 bag, as printed in the refusal. */
export function convertHint(bag: string): string {
  const dst = `${bag.replace(/[/\\]+$/, "").replace(/\.db3$/, "")}-mcap`;
  return `convert it to MCAP first, e.g. with rosbags (pip install rosbags): rosbags-convert --src ${bag} --dst ${dst} --dst-storage mcap` +
    ` (or ROS 2's own: ros2 bag convert), then pass ${dst}`;
}

/** Thrown for a rosbag2 bag rlft cannot read (sqlite3 storage). */
export class UnsupportedBagError extends Error {}

/** True when `dir` is a rosbag2 bag folder (it holds metadata.yaml). */
export function isRosbag2Folder(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true && existsSync(join(dir, "metadata.yaml"));
}

/** Throws {@link UnsupportedBagError} naming the fix when `path` is a sqlite3 bag: a .db3 file or a folder with one. */
export function refuseSqliteBag(path: string): void {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (st.isFile()) {
    if (path.endsWith(".db3")) throw new UnsupportedBagError(`${path} is a rosbag2 sqlite3 (.db3) file, which rlft does not read: ${convertHint(path)}`);
    return;
  }
  if (!isRosbag2Folder(path)) return;
  let storage = "";
  try {
    const meta = parse(readFileSync(join(path, "metadata.yaml"), "utf8")) as { rosbag2_bagfile_information?: { storage_identifier?: string } };
    storage = meta?.rosbag2_bagfile_information?.storage_identifier ?? "";
  } catch {
    // An unreadable metadata.yaml: decide by the files alone.
  }
  const db3 = readdirSync(path).some((f) => f.endsWith(".db3"));
  if (storage === "sqlite3" || (storage !== "mcap" && db3)) {
    throw new UnsupportedBagError(`${path} is a rosbag2 bag in sqlite3 storage (.db3), which rlft does not read (it reads MCAP): ${convertHint(path)}`);
  }
}

/** The one MCAP file of a rosbag2 bag folder or the .mcap file itself, for commands that read one episode. */
export function singleEpisodeFile(path: string): string {
  refuseSqliteBag(path);
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return path;
  const mcaps = readdirSync(path).filter((f) => f.endsWith(".mcap")).sort();
  if (mcaps.length === 1) return join(path, mcaps[0]);
  const what = isRosbag2Folder(path) ? "rosbag2 bag folder" : "folder";
  if (mcaps.length === 0) throw new Error(`${path} is a ${what} with no .mcap file: pass an .mcap episode or a rosbag2 bag recorded with --storage mcap`);
  throw new Error(`${path} is a ${what} with ${mcaps.length} .mcap files (${mcaps.slice(0, 3).join(", ")}${mcaps.length > 3 ? ", ..." : ""}): pass one of them, e.g. ${join(path, mcaps[0])}`);
}

/** For LeRobot import: a rosbag2 bag is not a LeRobot dataset; says what to run instead. */
export function refuseBagAsLeRobot(path: string): void {
  refuseSqliteBag(path);
  if (isRosbag2Folder(path)) {
    throw new Error(`${path} is a rosbag2 bag (metadata.yaml), not a LeRobot dataset: rlft reads it as it is (rlft inspect ${path}, rlft replay ${path})`);
  }
}
