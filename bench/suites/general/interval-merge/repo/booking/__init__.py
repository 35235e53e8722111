"""Meeting-room bookings: intervals of minutes since midnight."""
