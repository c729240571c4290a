"""SDU Robotics' ur_rtde (PyPI `ur-rtde`: RTDEReceiveInterface, RTDEIOInterface, ScriptClient, DashboardClient)
against `rlft ur-sim`, over loopback TCP as the UR driver uses it. UR's own RTDE Python client is not on PyPI;
ur_rtde is the client most UR users run.

Checks: RTDE setup / start / pause at 125 and 500 Hz with the guide's fields (the rate counted against the
controller's `timestamp`), input registers another client already writes (IN_USE), the speed slider, a program
sent to the secondary interface starts at once, a top-level statement after `end` is a second program, Local
control refuses programs, and a protective stop pauses the program until it is unlocked on the dashboard.
"""
import time

import pytest
import dashboard_client
import rtde_io
import rtde_receive
import script_client

# The fields of the report (UR's `record` example uses them) and a few more of the guide.
FIELDS = [
    "timestamp", "target_q", "target_qd", "target_qdd", "target_current", "target_moment", "actual_q", "actual_qd",
    "actual_current", "joint_control_output", "actual_TCP_pose", "actual_TCP_speed", "actual_TCP_force",
    "target_TCP_pose", "target_TCP_speed", "actual_digital_input_bits", "joint_temperatures", "actual_execution_time",
    "robot_mode", "joint_mode", "safety_mode", "actual_tool_accelerometer", "speed_scaling", "target_speed_fraction",
    "actual_momentum", "actual_main_voltage", "actual_robot_voltage", "actual_robot_current", "actual_joint_voltage",
    "actual_digital_output_bits", "runtime_state", "robot_status_bits", "safety_status_bits",
    "output_int_register_0", "output_double_register_0",
]


def wait_for(cond, what: str, timeout: float = 5.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.mark.parametrize("frequency", [125.0, 500.0])
def test_rtde_setup_start_pause_and_rate(ur_sim, frequency):
    """The rate a client observes is packages per controller second: count the packages the controller sent on this
    connection against the `timestamp` span they carry (not the test machine's wall clock)."""
    ur = ur_sim()
    variables = FIELDS if frequency == 125.0 else []  # [] → ur_rtde's own full list for 5.x
    r = rtde_receive.RTDEReceiveInterface(ur.host, frequency, variables)
    try:
        assert r.isConnected()
        assert r.getRobotMode() == 7 and r.getSafetyMode() == 1
        t0 = r.getTimestamp()
        seen = set()
        # Five seconds of controller time, as the client sees it; every timestamp lies on the 1/f grid.
        while r.getTimestamp() - t0 < 5.0:
            seen.add(round(r.getTimestamp(), 6))
            time.sleep(0.003)
        grid = [abs((t - t0) * frequency - round((t - t0) * frequency)) for t in seen]
        assert max(grid) < 1e-6, "every package is stamped with a controller cycle of the configured rate"
        stats = ur.sim.stats()
        [conn] = [c for c in stats["rtde"] if c["frequency"] == frequency and c["running"]]
        rate = (conn["packages"] - 1) / (conn["lastTimestamp"] - conn["firstTimestamp"])
        assert abs(rate - frequency) / frequency < 0.01, f"{rate:.2f} Hz at {frequency} Hz configured"
        assert conn["lastTimestamp"] - conn["firstTimestamp"] >= 5.0
        assert stats["stats"]["skippedCycles"] == 0
    finally:
        r.disconnect()  # pause, then close
    stats = ur.sim.stats()
    assert not any(c["running"] for c in stats["rtde"])


def test_registers_in_use_speed_slider_and_outputs(ur_sim):
    ur = ur_sim()
    r = rtde_receive.RTDEReceiveInterface(ur.host, 125.0)
    io = rtde_io.RTDEIOInterface(ur.host)
    try:
        assert io.setSpeedSlider(0.5)
        assert io.setStandardDigitalOut(1, True)
        wait_for(lambda: r.getSpeedScaling() == 0.5 and r.getActualDigitalOutputBits() == 2, "slider and digital output")
        # A second client asking for the same input registers: the controller answers IN_USE.
        with pytest.raises(RuntimeError, match="already in use"):
            rtde_io.RTDEIOInterface(ur.host)
        io.disconnect()
        # Released with the connection: the next client gets them.
        io = rtde_io.RTDEIOInterface(ur.host)
        assert io.setInputIntRegister(18, 5)
    finally:
        io.disconnect()
        r.disconnect()


def test_script_start_second_program_local_mode_and_protective_stop(ur_sim, tmp_path):
    ur = ur_sim()
    r = rtde_receive.RTDEReceiveInterface(ur.host, 125.0)
    d = dashboard_client.DashboardClient(ur.host, ur.dashboard)
    d.connect()
    s = script_client.ScriptClient(ur.host, 5, 15, ur.secondary)
    s.connect()
    try:
        assert d.isInRemoteControl()
        # A program starts as soon as it is received (no socket close needed).
        prog = tmp_path / "probe.script"
        prog.write_text("def probe():\n  write_output_integer_register(13, 9)\n  while True:\n    sync()\n  end\nend\n")
        assert s.sendScript(str(prog))
        wait_for(lambda: r.getRuntimeState() == 2 and r.getOutputIntRegister(13) == 9, "probe to play")
        assert "PLAYING probe" in d.programState()
        # Protective stop: the program pauses, the client sees it; unlock on the dashboard, then play.
        assert ur.sim.command("protective-stop").startswith("ok")
        wait_for(lambda: r.isProtectiveStopped() and r.getSafetyMode() == 3 and r.getRuntimeState() == 4, "protective stop, program paused")
        assert "PROTECTIVE_STOP" in d.safetymode()
        d.unlockProtectiveStop()
        wait_for(lambda: r.getSafetyMode() == 1, "safety mode NORMAL after the unlock")
        assert r.getRuntimeState() == 4, "the program stays paused until played"
        d.play()
        wait_for(lambda: r.getRuntimeState() == 2, "the program playing again")
        d.stop()
        wait_for(lambda: r.getRuntimeState() == 1, "the program stopped")
        # A top-level statement after `end` is a second program: it replaces the first and fails to compile.
        prog.write_text("def looper():\n  while True:\n    sync()\n  end\nend\nlooper()\n")
        assert s.sendScript(str(prog))
        wait_for(lambda: any("compile_error" in m for m in ur.sim.stats()["messages"]), "the compile error of the second program")
        assert r.getRuntimeState() == 1
        # Local control: programs from the network are refused.
        assert ur.sim.command("local").startswith("ok")
        assert not d.isInRemoteControl()
        prog.write_text("def probe2():\n  while True:\n    sync()\n  end\nend\n")
        assert s.sendScript(str(prog))
        wait_for(lambda: any("Local control" in m for m in ur.sim.stats()["messages"]), "the refusal in Local control")
        assert r.getRuntimeState() == 1
    finally:
        s.disconnect()
        d.disconnect()
        r.disconnect()
