"""Monthly usage reports for the admin dashboard."""
from collections import Counter
from datetime import date


class MonthlyReport:
    def __init__(self, month: date):
        self.month = month
        self.logins = Counter()

    def add_login(self, user_id):
        self.logins[user_id] += 1

    def top_users(self, n=10):
        return self.logins.most_common(n)


def generate_monthly_report(events, month):
    report = MonthlyReport(month)
    for event in events:
        if event["type"] == "login" and event["date"].month == month.month:
            report.add_login(event["user_id"])
    return report
