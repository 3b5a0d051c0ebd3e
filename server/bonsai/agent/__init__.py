"""bonsai.agent"""
