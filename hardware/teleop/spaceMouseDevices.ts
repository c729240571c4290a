/**
 * 3Dconnexion SpaceMouse models and their HID input-report layouts, as data.
 *
 * Source: the devices' HID report descriptors (Generic Desktop / Multi-axis Controller), as decoded by
 * spacenavd (src/dev_usb_linux.c) and pyspacemouse (device specs per product id). Two layouts exist:
 *  - split: report 1 = translation X, Y, Z; report 2 = rotation Rx, Ry, Rz; report 3 = button bitmap.
 *    Each axis is a little-endian int16, logical range about ±350.
 *  - combined (the wireless generation): report 1 carries all six axes (12 bytes) in the same order;
 *    report 3 is still the button bitmap.
 * HID axes are X right, Y towards the user, Z down (the cap pushed down is +Z); `toRobot` flips them to a
 * right-handed X right, Y away from the user, Z up frame, so pushing the cap forward moves the tool forward.
 */

/** Layout of one model's reports. */
export interface SpaceMouseModel {
  name: string;
  vendorId: number;
  productId: number;
  layout: "split" | "combined";
  /** Full-scale axis value (the logical maximum the descriptor reports). */
  fullScale: number;
  /** Button bit → role; unlisted buttons are ignored. */
  buttons: Record<number, "gripper" | "takeover">;
}

/** Sign flips HID (x, y, z, rx, ry, rz) → robot frame (x right, y forward, z up). */
export const SPACEMOUSE_TO_ROBOT = [1, -1, -1, 1, -1, -1] as const;

const twoButtons = { 0: "gripper", 1: "takeover" } as const;

/** Known models (vendor 0x046d = 3Dconnexion under Logitech, 0x256f = 3Dconnexion). */
export const SPACEMOUSE_MODELS: readonly SpaceMouseModel[] = [
  { name: "SpaceNavigator", vendorId: 0x046d, productId: 0xc626, layout: "split", fullScale: 350, buttons: twoButtons },
  { name: "SpaceNavigator for Notebooks", vendorId: 0x046d, productId: 0xc628, layout: "split", fullScale: 350, buttons: twoButtons },
  { name: "SpaceExplorer", vendorId: 0x046d, productId: 0xc627, layout: "split", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Pro", vendorId: 0x046d, productId: 0xc62b, layout: "split", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Compact", vendorId: 0x256f, productId: 0xc635, layout: "split", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Wireless (cable)", vendorId: 0x256f, productId: 0xc62e, layout: "combined", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Wireless (receiver)", vendorId: 0x256f, productId: 0xc62f, layout: "combined", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Wireless (universal receiver)", vendorId: 0x256f, productId: 0xc652, layout: "combined", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Pro Wireless (cable)", vendorId: 0x256f, productId: 0xc631, layout: "combined", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Pro Wireless (receiver)", vendorId: 0x256f, productId: 0xc632, layout: "combined", fullScale: 350, buttons: twoButtons },
  { name: "SpaceMouse Enterprise", vendorId: 0x256f, productId: 0xc633, layout: "combined", fullScale: 350, buttons: twoButtons },
];

/** The model with this vendor/product id, or undefined. */
export function findSpaceMouseModel(vendorId: number, productId: number): SpaceMouseModel | undefined {
  return SPACEMOUSE_MODELS.find((m) => m.vendorId === vendorId && m.productId === productId);
}
