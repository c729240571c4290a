/**
 * A test double of a robot's controller_manager, for the ros2_control bridge's tests and the ArmDriver contract
 * suite: a joint_state_broadcaster publishing every joint in its own order (plus a finger joint the arm does not
 * drive) at 100 Hz, and a forward_command_controller or joint_trajectory_controller that moves the joints to what
 * it receives. Received messages also go through CDR (what the ROS 2 wire carries) to check their shape.
 */
import { MessageRegistry } from "../../runtime/msgs/MessageRegistry.ts";
import type { NodeHandle } from "../../runtime/Runtime.ts";

/** The arm joints the double drives. */
export const FAKE_ARM = ["joint1", "joint2", "joint3"];

/** controller_manager double: broadcaster at 100 Hz, one command controller. */
export function fakeRos2Control(node: NodeHandle, mode: "forward" | "trajectory") {
  const reg = MessageRegistry.default();
  // Broadcaster order differs from ours and includes a finger joint we do not drive.
  const order = ["finger", "joint3", "joint1", "joint2"];
  const q: Record<string, number> = { finger: 0.01, joint1: 0.1, joint2: 0.2, joint3: 0.3 };
  const received: unknown[] = [];
  const pub = node.createPublisher("sensor_msgs/msg/JointState", "/joint_states");
  if (mode === "forward") {
    node.createSubscription<{ data: number[] }>("std_msgs/msg/Float64MultiArray", "/forward_position_controller/commands", (m) => {
      received.push(reg.decode("std_msgs/msg/Float64MultiArray", reg.encode("std_msgs/msg/Float64MultiArray", m)));
      FAKE_ARM.forEach((j, i) => (q[j] = m.data[i]));
    });
  } else {
    node.createSubscription<{ joint_names: string[]; points: { positions: number[] }[] }>("trajectory_msgs/msg/JointTrajectory", "/joint_trajectory_controller/joint_trajectory", (m) => {
      received.push(reg.decode("trajectory_msgs/msg/JointTrajectory", reg.encode("trajectory_msgs/msg/JointTrajectory", m)));
      m.joint_names.forEach((j, i) => (q[j] = m.points[0].positions[i]));
    });
  }
  const timer = node.createTimer(0.01, () => {
    pub.publish({ header: { stamp: node.clock.stamp(), frame_id: "" }, name: order, position: order.map((j) => q[j]), velocity: order.map(() => 0), effort: order.map(() => 0) });
  });
  return { q, received, stop: () => timer.cancel() };
}

