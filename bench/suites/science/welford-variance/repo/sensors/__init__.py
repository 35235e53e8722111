"""ADC sensor readings: conversion to volts and streaming statistics."""
