"""Hardware abstraction: small interfaces, gpiozero adapters, audio, and the simulated launcher."""
