/**
 * Feetech STS3215 (the SO-100 / SO-101 servo), memory table.
 * Source: Feetech "STS3215 Memory Table" (SMS/STS series, 内存表, v1.x) as published by Feetech and mirrored
 * in LeRobot `lerobot/motors/feetech/tables.py` (STS_SMS_SERIES_CONTROL_TABLE, model number 777, sign bits in
 * STS_SMS_SERIES_ENCODINGS_TABLE). Multi-byte values are little-endian on STS/SMS (SCS is big-endian).
 */
import type { ServoModel } from "../servo/ServoModel.ts";

/** The STS3215 register table. */
export const STS3215: ServoModel = {
  name: "STS3215",
  modelNumber: 777,
  ticksPerRev: 4096,
  byteOrder: "little",
  // Present_Velocity counts encoder steps per second (datasheet: "step/s").
  velocityScale: (2 * Math.PI) / 4096,
  // Present_Load: 0.1 % of the stall torque, sign at bit 10 (direction).
  effort: { register: "Present_Load", scale: 0.001, unit: "fraction of stall torque" },
  source: "Feetech STS3215 memory table (SMS/STS series); LeRobot motors/feetech/tables.py",
  registers: {
    // EEPROM
    Firmware_Major_Version: { address: 0, size: 1, access: "R", area: "EEPROM" },
    Firmware_Minor_Version: { address: 1, size: 1, access: "R", area: "EEPROM" },
    Model_Number: { address: 3, size: 2, access: "R", area: "EEPROM" },
    ID: { address: 5, size: 1, access: "RW", area: "EEPROM" },
    Baud_Rate: { address: 6, size: 1, access: "RW", area: "EEPROM", unit: "0:1M 1:500k 2:250k 3:128k 4:115200 5:76800 6:57600 7:38400" },
    Return_Delay_Time: { address: 7, size: 1, access: "RW", area: "EEPROM", unit: "2 µs" },
    Response_Status_Level: { address: 8, size: 1, access: "RW", area: "EEPROM" },
    Min_Position_Limit: { address: 9, size: 2, access: "RW", area: "EEPROM", unit: "step" },
    Max_Position_Limit: { address: 11, size: 2, access: "RW", area: "EEPROM", unit: "step" },
    Max_Temperature_Limit: { address: 13, size: 1, access: "RW", area: "EEPROM", unit: "°C" },
    Max_Voltage_Limit: { address: 14, size: 1, access: "RW", area: "EEPROM", unit: "0.1 V" },
    Min_Voltage_Limit: { address: 15, size: 1, access: "RW", area: "EEPROM", unit: "0.1 V" },
    Max_Torque_Limit: { address: 16, size: 2, access: "RW", area: "EEPROM", unit: "0.1 %" },
    Phase: { address: 18, size: 1, access: "RW", area: "EEPROM" },
    Unloading_Condition: { address: 19, size: 1, access: "RW", area: "EEPROM" },
    LED_Alarm_Condition: { address: 20, size: 1, access: "RW", area: "EEPROM" },
    P_Coefficient: { address: 21, size: 1, access: "RW", area: "EEPROM" },
    D_Coefficient: { address: 22, size: 1, access: "RW", area: "EEPROM" },
    I_Coefficient: { address: 23, size: 1, access: "RW", area: "EEPROM" },
    Minimum_Startup_Force: { address: 24, size: 2, access: "RW", area: "EEPROM" },
    CW_Dead_Zone: { address: 26, size: 1, access: "RW", area: "EEPROM" },
    CCW_Dead_Zone: { address: 27, size: 1, access: "RW", area: "EEPROM" },
    Protection_Current: { address: 28, size: 2, access: "RW", area: "EEPROM", unit: "6.5 mA" },
    Angular_Resolution: { address: 30, size: 1, access: "RW", area: "EEPROM" },
    Homing_Offset: { address: 31, size: 2, access: "RW", area: "EEPROM", signed: { signBit: 11 }, unit: "step" },
    Operating_Mode: { address: 33, size: 1, access: "RW", area: "EEPROM", unit: "0 position, 1 velocity, 2 PWM, 3 step" },
    Protective_Torque: { address: 34, size: 1, access: "RW", area: "EEPROM" },
    Protection_Time: { address: 35, size: 1, access: "RW", area: "EEPROM" },
    Overload_Torque: { address: 36, size: 1, access: "RW", area: "EEPROM" },
    // RAM
    Torque_Enable: { address: 40, size: 1, access: "RW", area: "RAM", unit: "0 off, 1 on, 128 set current position as middle" },
    Acceleration: { address: 41, size: 1, access: "RW", area: "RAM", unit: "100 step/s²" },
    Goal_Position: { address: 42, size: 2, access: "RW", area: "RAM", signed: { signBit: 15 }, unit: "step" },
    Goal_Time: { address: 44, size: 2, access: "RW", area: "RAM", unit: "ms" },
    Goal_Velocity: { address: 46, size: 2, access: "RW", area: "RAM", signed: { signBit: 15 }, unit: "step/s" },
    Torque_Limit: { address: 48, size: 2, access: "RW", area: "RAM", unit: "0.1 %" },
    Lock: { address: 55, size: 1, access: "RW", area: "RAM", unit: "0 EEPROM writable, 1 locked" },
    Present_Position: { address: 56, size: 2, access: "R", area: "RAM", signed: { signBit: 15 }, unit: "step" },
    Present_Velocity: { address: 58, size: 2, access: "R", area: "RAM", signed: { signBit: 15 }, unit: "step/s" },
    Present_Load: { address: 60, size: 2, access: "R", area: "RAM", signed: { signBit: 10 }, unit: "0.1 %" },
    Present_Voltage: { address: 62, size: 1, access: "R", area: "RAM", unit: "0.1 V" },
    Present_Temperature: { address: 63, size: 1, access: "R", area: "RAM", unit: "°C" },
    Status: { address: 65, size: 1, access: "R", area: "RAM", unit: "bit0 voltage, bit1 angle sensor, bit2 overheat, bit3 overcurrent, bit4 angle, bit5 overload" },
    Moving: { address: 66, size: 1, access: "R", area: "RAM" },
    Present_Current: { address: 69, size: 2, access: "R", area: "RAM", unit: "6.5 mA" },
  },
};
