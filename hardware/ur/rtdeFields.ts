/**
 * The field names and types of the UR "Real-Time Data Exchange (RTDE) Guide", §"Field names and associated
 * types", for URControl 5.x (e-Series; the simulator reports 5.15 unless told otherwise). Outputs are what a
 * client may subscribe to (CONTROL_PACKAGE_SETUP_OUTPUTS), inputs what it may write
 * (CONTROL_PACKAGE_SETUP_INPUTS). A name not listed here is answered NOT_FOUND, as by a controller.
 *
 * Registers (§"Field names", general purpose registers): 48 int and 48 double input/output registers
 * (0–23 are meant for fieldbus / PLC use, 24–47 for external RTDE clients, but both ranges are writable over
 * RTDE when no fieldbus holds them), bit registers 0–63 as two UINT32 words, bits 64–127 one BOOL each. Input
 * registers can also be read as outputs (the guide lists them among the outputs).
 */
import type { RtdeType } from "./rtdeProtocol.ts";

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);
const named = (prefix: string, ids: number[], type: RtdeType) => Object.fromEntries(ids.map((i) => [`${prefix}${i}`, type])) as Record<string, RtdeType>;

/** Registers readable and writable by a client (§Field names: input_*). */
const INPUT_REGISTERS: Record<string, RtdeType> = {
  input_bit_registers0_to_31: "UINT32",
  input_bit_registers32_to_63: "UINT32",
  ...named("input_bit_register_", range(64, 64), "BOOL"),
  ...named("input_int_register_", range(48), "INT32"),
  ...named("input_double_register_", range(48), "DOUBLE"),
};

/** Controller inputs (§"Robot controller inputs"). */
export const RTDE_INPUTS: Readonly<Record<string, RtdeType>> = {
  speed_slider_mask: "UINT32",
  speed_slider_fraction: "DOUBLE",
  standard_digital_output_mask: "UINT8",
  standard_digital_output: "UINT8",
  configurable_digital_output_mask: "UINT8",
  configurable_digital_output: "UINT8",
  tool_digital_output_mask: "UINT8",
  tool_digital_output: "UINT8",
  standard_analog_output_mask: "UINT8",
  standard_analog_output_type: "UINT8",
  standard_analog_output_0: "DOUBLE",
  standard_analog_output_1: "DOUBLE",
  external_force_torque: "VECTOR6D",
  ...INPUT_REGISTERS,
};

/** Controller outputs (§"Robot controller outputs"). */
export const RTDE_OUTPUTS: Readonly<Record<string, RtdeType>> = {
  timestamp: "DOUBLE",
  target_q: "VECTOR6D",
  target_qd: "VECTOR6D",
  target_qdd: "VECTOR6D",
  target_current: "VECTOR6D",
  target_moment: "VECTOR6D",
  actual_q: "VECTOR6D",
  actual_qd: "VECTOR6D",
  actual_current: "VECTOR6D",
  actual_current_window: "VECTOR6D",
  joint_control_output: "VECTOR6D",
  actual_TCP_pose: "VECTOR6D",
  actual_TCP_speed: "VECTOR6D",
  actual_TCP_force: "VECTOR6D",
  target_TCP_pose: "VECTOR6D",
  target_TCP_speed: "VECTOR6D",
  actual_digital_input_bits: "UINT64",
  joint_temperatures: "VECTOR6D",
  actual_execution_time: "DOUBLE",
  robot_mode: "INT32",
  joint_mode: "VECTOR6INT32",
  safety_mode: "INT32",
  safety_status: "INT32",
  actual_tool_accelerometer: "VECTOR3D",
  speed_scaling: "DOUBLE",
  target_speed_fraction: "DOUBLE",
  actual_momentum: "DOUBLE",
  actual_main_voltage: "DOUBLE",
  actual_robot_voltage: "DOUBLE",
  actual_robot_current: "DOUBLE",
  actual_joint_voltage: "VECTOR6D",
  actual_digital_output_bits: "UINT64",
  runtime_state: "UINT32",
  elbow_position: "VECTOR3D",
  elbow_velocity: "VECTOR3D",
  robot_status_bits: "UINT32",
  safety_status_bits: "UINT32",
  analog_io_types: "UINT32",
  standard_analog_input0: "DOUBLE",
  standard_analog_input1: "DOUBLE",
  standard_analog_output0: "DOUBLE",
  standard_analog_output1: "DOUBLE",
  io_current: "DOUBLE",
  euromap67_input_bits: "UINT32",
  euromap67_output_bits: "UINT32",
  euromap67_24V_voltage: "DOUBLE",
  euromap67_24V_current: "DOUBLE",
  tool_mode: "UINT32",
  tool_analog_input_types: "UINT32",
  tool_analog_input0: "DOUBLE",
  tool_analog_input1: "DOUBLE",
  tool_output_voltage: "INT32",
  tool_output_current: "DOUBLE",
  tool_temperature: "DOUBLE",
  tcp_force_scalar: "DOUBLE",
  output_bit_registers0_to_31: "UINT32",
  output_bit_registers32_to_63: "UINT32",
  ...named("output_bit_register_", range(64, 64), "BOOL"),
  ...named("output_int_register_", range(48), "INT32"),
  ...named("output_double_register_", range(48), "DOUBLE"),
  ...INPUT_REGISTERS,
  tool_output_mode: "UINT8",
  tool_digital_output0_mode: "UINT8",
  tool_digital_output1_mode: "UINT8",
  payload: "DOUBLE",
  payload_cog: "VECTOR3D",
  payload_inertia: "VECTOR6D",
  script_control_line: "UINT32",
  ft_raw_wrench: "VECTOR6D",
  joint_position_deviation_ratio: "DOUBLE",
  collision_detection_ratio: "DOUBLE",
  time_scale_source: "INT32",
  tcp_offset: "VECTOR6D",
};

/** The zero of a type, for fields the simulator does not model (I/O, tool, euromap). */
export function zeroOf(t: RtdeType): number | bigint | boolean | number[] {
  switch (t) {
    case "BOOL":
      return false;
    case "UINT64":
      return 0n;
    case "VECTOR3D":
      return [0, 0, 0];
    case "VECTOR6D":
    case "VECTOR6INT32":
    case "VECTOR6UINT32":
      return [0, 0, 0, 0, 0, 0];
    default:
      return 0;
  }
}
