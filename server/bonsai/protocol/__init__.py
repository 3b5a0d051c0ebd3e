"""bonsai.protocol"""
