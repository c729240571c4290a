/** The ros2_control driver's ArmDriver contract fixture: a controller_manager double on the embedded runtime. */
import type { ContractFixture } from "../driverEntry.ts";
import type { DriverHarness } from "../contract.ts";
import { EmbeddedRuntime } from "../../runtime/embedded/EmbeddedRuntime.ts";
import { Ros2ControlDriver } from "./Ros2ControlDriver.ts";
import { FAKE_ARM, fakeRos2Control } from "./fakeRos2Control.ts";

export const ros2ControlFixture: ContractFixture = {
  name: "ros2_control (controller_manager double)",
  faults: ["joint_state_broadcaster stops"],
  make: async (): Promise<DriverHarness> => {
    const rt = await EmbeddedRuntime.create({ clock: "wall", logLevel: "error" });
    const fake = fakeRos2Control(rt.createNode("controller_manager"), "forward");
    const driver = new Ros2ControlDriver({ node: rt.createNode("arm_bridge"), joints: FAKE_ARM, lower: [-1, -1, -1], upper: [1, 1, 1], command: "forward", staleSec: 0.3 });
    return {
      driver,
      target: [0.5, -0.5, 0.25],
      tolerance: 1e-9,
      faults: [{ name: "joint_state_broadcaster stops", inject: () => fake.stop(), expect: /no joint state on \/joint_states for .* is the ros2_control node alive/ }],
      close: async () => {
        fake.stop();
        await rt.shutdown();
      },
    };
  },
};
