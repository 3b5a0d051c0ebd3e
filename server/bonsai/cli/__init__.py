"""bonsai.cli"""
