ADC_BITS = 12
VREF = 3.3  # volts at full scale
FULL_SCALE = 2**ADC_BITS - 1
