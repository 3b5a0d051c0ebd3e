"""bonsai.daemon"""
