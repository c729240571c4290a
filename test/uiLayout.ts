/**
 * Layout checks of the operator page in a real browser (web/operatorUi.test.ts): what an operator on a phone or a
 * desktop must be able to see and press, measured from the elements' bounding boxes rather than from pixels.
 */
import type { Page } from "playwright-core";

/** Options of {@link operatorLayoutProblems}. */
export interface LayoutCheck {
  /** Smallest button height in CSS px (touch targets: 44 pt, Apple Human Interface Guidelines). */
  minButtonHeight: number;
}

interface Box {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

interface Measure {
  vw: number;
  vh: number;
  scrollWidth: number;
  scrollHeight: number;
  header: Box;
  panel: Box;
  camera: Box;
  bar: Box;
  others: (Box & { name: string })[];
  clipped: string[];
  buttons: (Box & { name: string })[];
  rows: (Box & { name: string })[];
}

/**
 * Runs in the page. A string, not a function: tsx's esbuild wraps named inner functions in a `__name` helper that
 * does not exist in the browser.
 */
const MEASURE = `(() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
  const name = (e) => e.id || (e.tagName === "BUTTON" ? "button " + e.dataset.cmd : e.tagName.toLowerCase() + "." + e.className);
  const rows = [...document.querySelectorAll(".panel dt, .panel dd")];
  const buttons = [...document.querySelectorAll("section.buttons button")];
  return {
    vw: window.innerWidth,
    vh: window.innerHeight,
    scrollWidth: document.documentElement.scrollWidth,
    scrollHeight: document.documentElement.scrollHeight,
    header: box(document.querySelector("header")),
    panel: box(document.querySelector(".panel")),
    camera: box(document.querySelector(".camera")),
    bar: box(document.querySelector(".buttons")),
    others: [...document.querySelectorAll("main > section:not(.buttons)")].map((e) => ({ name: name(e), ...box(e) })),
    clipped: [...rows, ...buttons].filter((e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1).map((e) => name(e) + ' "' + e.textContent + '"'),
    buttons: buttons.map((e) => ({ name: name(e), ...box(e) })),
    rows: rows.map((e) => ({ name: e.tagName.toLowerCase() + ' "' + (e.textContent || "").slice(0, 20) + '"', ...box(e) })),
  };
})()`;

/**
 * Problems with the operator page's layout at the current viewport, one line each (empty when fine):
 * horizontal overflow; status-panel rows or buttons whose text is clipped; at the top of the page, the status panel
 * or the camera outside the viewport or under the buttons, or a button out of reach; at the bottom of the page,
 * a section still under the buttons (hidden for good) or an empty band between the content and the buttons or
 * below them.
 */
export async function operatorLayoutProblems(page: Page, check: LayoutCheck): Promise<string[]> {
  const at = async (y: "top" | "bottom") => {
    await page.evaluate(`window.scrollTo(0, ${y === "top" ? 0 : "document.documentElement.scrollHeight"})`);
    await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
    return page.evaluate(MEASURE) as Promise<Measure>;
  };
  const overlap = (a: Box, b: Box) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const px = (v: number) => `${Math.round(v)} px`;
  const out: string[] = [];
  const top = await at("top");
  const where = `${top.vw}×${top.vh}`;
  if (top.scrollWidth > top.vw) out.push(`${where}: the page is ${px(top.scrollWidth)} wide (horizontal scrolling)`);
  for (const c of top.clipped) out.push(`${where}: ${c} is clipped`);
  for (const [label, b] of [["status panel", top.panel], ["camera", top.camera]] as const) {
    if (b.top < top.header.bottom - 0.5 || b.bottom > top.vh + 0.5) out.push(`${where}: the ${label} (${px(b.top)}–${px(b.bottom)}) is not inside the first screen (${px(top.header.bottom)}–${px(top.vh)})`);
    if (overlap(b, top.bar)) out.push(`${where}: the buttons (${px(top.bar.top)}–${px(top.bar.bottom)}) cover the ${label} (${px(b.top)}–${px(b.bottom)})`);
  }
  for (const r of top.rows) if (r.bottom > top.panel.bottom + 0.5 || r.right > top.panel.right + 0.5) out.push(`${where}: status row ${r.name} sticks out of the panel`);
  for (const b of top.buttons) {
    if (b.top < 0 || b.bottom > top.vh + 0.5 || b.left < 0 || b.right > top.vw + 0.5) out.push(`${where}: ${b.name} is not on the first screen`);
    if (b.bottom - b.top < check.minButtonHeight) out.push(`${where}: ${b.name} is ${px(b.bottom - b.top)} tall (< ${check.minButtonHeight})`);
  }
  const end = await at("bottom");
  for (const s of end.others) if (overlap(s, end.bar)) out.push(`${where}: at the end of the page the buttons still cover ${s.name}`);
  const contentBottom = Math.max(...end.others.map((s) => s.bottom), end.bar.bottom);
  // A page shorter than the screen ends where it ends; one that scrolls must not scroll into emptiness.
  if (end.scrollHeight > end.vh + 1 && end.vh - contentBottom > 24) out.push(`${where}: an empty band of ${px(end.vh - contentBottom)} below the content at the end of the page`);
  if (end.bar.top > Math.max(...end.others.map((s) => s.bottom))) {
    const gap = end.bar.top - Math.max(...end.others.filter((s) => s.bottom <= end.bar.top + 0.5).map((s) => s.bottom));
    if (gap > 24) out.push(`${where}: an empty band of ${px(gap)} above the buttons at the end of the page`);
  }
  await at("top");
  return out;
}
