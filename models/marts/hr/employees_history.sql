{{ typed_history('HR.EMPLOYEES', 'qlik', hr_employees_columns()) }}
