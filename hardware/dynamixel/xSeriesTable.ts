/**
 * The control table shared by the Dynamixel X series on Protocol 2.0 (ROBOTIS e-Manual, "Control Table of
 * EEPROM Area" / "Control Table of RAM Area" of each X-series page). Models differ in a few registers
 * (XL330 has Current Limit / Goal Current / Present Current; XL430 has Present Load instead), which the
 * model files add. Multi-byte values are little-endian, signed ones two's complement.
 */
import type { Register } from "../servo/ServoModel.ts";

/** Registers every X-series model has at the same address. */
export const X_SERIES_COMMON: Record<string, Register> = {
  // EEPROM
  Model_Number: { address: 0, size: 2, access: "R", area: "EEPROM" },
  Model_Information: { address: 2, size: 4, access: "R", area: "EEPROM" },
  Firmware_Version: { address: 6, size: 1, access: "R", area: "EEPROM" },
  ID: { address: 7, size: 1, access: "RW", area: "EEPROM" },
  Baud_Rate: { address: 8, size: 1, access: "RW", area: "EEPROM", unit: "0:9600 1:57600 2:115200 3:1M 4:2M 5:3M 6:4M" },
  Return_Delay_Time: { address: 9, size: 1, access: "RW", area: "EEPROM", unit: "2 µs" },
  Drive_Mode: { address: 10, size: 1, access: "RW", area: "EEPROM", unit: "bit0 reverse direction" },
  Operating_Mode: { address: 11, size: 1, access: "RW", area: "EEPROM", unit: "3 position, 4 extended position, 5 current-based position" },
  Secondary_ID: { address: 12, size: 1, access: "RW", area: "EEPROM" },
  Protocol_Type: { address: 13, size: 1, access: "RW", area: "EEPROM" },
  Homing_Offset: { address: 20, size: 4, access: "RW", area: "EEPROM", signed: "twos", unit: "pulse" },
  Moving_Threshold: { address: 24, size: 4, access: "RW", area: "EEPROM", unit: "0.229 rev/min" },
  Temperature_Limit: { address: 31, size: 1, access: "RW", area: "EEPROM", unit: "°C" },
  Max_Voltage_Limit: { address: 32, size: 2, access: "RW", area: "EEPROM", unit: "0.1 V" },
  Min_Voltage_Limit: { address: 34, size: 2, access: "RW", area: "EEPROM", unit: "0.1 V" },
  PWM_Limit: { address: 36, size: 2, access: "RW", area: "EEPROM", unit: "0.113 %" },
  Velocity_Limit: { address: 44, size: 4, access: "RW", area: "EEPROM", unit: "0.229 rev/min" },
  Max_Position_Limit: { address: 48, size: 4, access: "RW", area: "EEPROM", unit: "pulse" },
  Min_Position_Limit: { address: 52, size: 4, access: "RW", area: "EEPROM", unit: "pulse" },
  Shutdown: { address: 63, size: 1, access: "RW", area: "EEPROM", unit: "Hardware Error Status bits that switch the torque off (default 52)" },
  // RAM
  Torque_Enable: { address: 64, size: 1, access: "RW", area: "RAM" },
  LED: { address: 65, size: 1, access: "RW", area: "RAM" },
  Status_Return_Level: { address: 68, size: 1, access: "RW", area: "RAM" },
  Registered_Instruction: { address: 69, size: 1, access: "R", area: "RAM" },
  Hardware_Error_Status: { address: 70, size: 1, access: "R", area: "RAM", unit: "bit0 input voltage, bit2 overheating, bit3 motor encoder, bit4 electrical shock, bit5 overload (e-Manual Shutdown(63))" },
  Velocity_I_Gain: { address: 76, size: 2, access: "RW", area: "RAM" },
  Velocity_P_Gain: { address: 78, size: 2, access: "RW", area: "RAM" },
  Position_D_Gain: { address: 80, size: 2, access: "RW", area: "RAM" },
  Position_I_Gain: { address: 82, size: 2, access: "RW", area: "RAM" },
  Position_P_Gain: { address: 84, size: 2, access: "RW", area: "RAM" },
  Feedforward_2nd_Gain: { address: 88, size: 2, access: "RW", area: "RAM" },
  Feedforward_1st_Gain: { address: 90, size: 2, access: "RW", area: "RAM" },
  // 1..127: stop when no instruction arrives for N × 20 ms while torque is on (e-Manual "Bus Watchdog(98)").
  Bus_Watchdog: { address: 98, size: 1, access: "RW", area: "RAM", signed: "twos", unit: "20 ms" },
  Goal_PWM: { address: 100, size: 2, access: "RW", area: "RAM", signed: "twos" },
  Goal_Velocity: { address: 104, size: 4, access: "RW", area: "RAM", signed: "twos", unit: "0.229 rev/min" },
  Profile_Acceleration: { address: 108, size: 4, access: "RW", area: "RAM" },
  Profile_Velocity: { address: 112, size: 4, access: "RW", area: "RAM" },
  Goal_Position: { address: 116, size: 4, access: "RW", area: "RAM", signed: "twos", unit: "pulse" },
  Realtime_Tick: { address: 120, size: 2, access: "R", area: "RAM", unit: "ms" },
  Moving: { address: 122, size: 1, access: "R", area: "RAM" },
  Moving_Status: { address: 123, size: 1, access: "R", area: "RAM" },
  Present_PWM: { address: 124, size: 2, access: "R", area: "RAM", signed: "twos" },
  Present_Velocity: { address: 128, size: 4, access: "R", area: "RAM", signed: "twos", unit: "0.229 rev/min" },
  Present_Position: { address: 132, size: 4, access: "R", area: "RAM", signed: "twos", unit: "pulse" },
  Velocity_Trajectory: { address: 136, size: 4, access: "R", area: "RAM", signed: "twos" },
  Position_Trajectory: { address: 140, size: 4, access: "R", area: "RAM", signed: "twos" },
  Present_Input_Voltage: { address: 144, size: 2, access: "R", area: "RAM", unit: "0.1 V" },
  Present_Temperature: { address: 146, size: 1, access: "R", area: "RAM", unit: "°C" },
};

/** rad/s per unit of Present_Velocity on the X series (0.229 rev/min). */
export const X_VELOCITY_SCALE = (0.229 * 2 * Math.PI) / 60;
