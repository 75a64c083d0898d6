"""System assembly: the plant model, the devices, the controllers and the references built
once from a resolved scenario."""
